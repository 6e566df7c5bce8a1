/* SPDX-License-Identifier: ISC */
/*
 * The one walk to what retry opens by a path it was given: the state
 * directory (circuit.c) and the files it writes for the user (outfile.c).
 * One name at a time from directory descriptors, so that what is checked
 * is what is used; what only one of them needs (no link at all, only
 * directories that no one else can change, what is missing made) is a
 * rule that it asks for.
 */
#include "compat.h"	/* first: the feature macros */

#include <sys/stat.h>
#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

/*
 * A directory opened only to walk from and to make names in: O_SEARCH
 * (POSIX) or Linux's O_PATH, like a path, need no right to list it.  The
 * directory that a WALK_TO_DIR walk leads to is opened to be read.
 */
#if defined(O_SEARCH)
#define SEARCH_ONLY	O_SEARCH
#elif defined(O_PATH)
#define SEARCH_ONLY	O_PATH
#else
#define SEARCH_ONLY	O_RDONLY
#endif

/* What a walk keeps as it goes. */
struct walking {
	char	 rest[PATH_MAX];	/* the path from the name on, links
					   replaced by their text */
	char	 shown[PATH_MAX];	/* the directory walked to, for
					   messages */
	int	 links;			/* followed so far */
	int	 rules;			/* WALK_* */
};

/*
 * Stops the walk at the name it is at: why, and an errno to go with it,
 * the system's, or EPERM where a rule of the walk refuses.
 */
static int
fault(struct path_walk *w, enum walk_fault f, int e)
{
	w->fault = f;
	w->err = e;
	return -1;
}

/* ---- Directories that no one else can change ---------------------------- */

/*
 * Is gid the group of its owner alone: one member, owner, counted by
 * primary group and by the group's list?  A user private group, which
 * many systems give each user and make home directories writable by: it
 * lets no one else write, and OpenSSH's StrictModes accepts it (Debian).
 * A group of no one (a setgid program's) is not one.
 */
static int
private_group(gid_t gid, uid_t owner)
{
	char listed[256] = "";
	struct passwd *pw;
	struct group *gr;
	int members = 0, others = 0;

	if ((gr = getgrgid(gid)) == NULL)
		return 0;
	if (gr->gr_mem[0] != NULL && (gr->gr_mem[1] != NULL ||
	    snprintf(listed, sizeof(listed), "%s", gr->gr_mem[0]) >=
	    (int)sizeof(listed)))
		return 0;
	setpwent();
	while ((pw = getpwent()) != NULL)
		if (pw->pw_gid == gid) {
			members++;
			others += pw->pw_uid != owner;
		}
	endpwent();
	if (others != 0)
		return 0;
	if (listed[0] != '\0') {
		if ((pw = getpwuid(owner)) == NULL ||
		    strcmp(pw->pw_name, listed) != 0)
			return 0;
		members++;
	}
	return members > 0;
}

/*
 * WALK_TRUSTED: a directory on the way must not let another user swap
 * what it holds: it belongs to root or the user and no one else may
 * write it (its owner's private group aside), unless it is sticky, as
 * /tmp is (then others cannot rename or remove what is not theirs).
 * WALK_OWN: the directory that the walk leads to (last) is the user's,
 * and no one else may write it, sticky or not.
 */
static int
vouch(struct path_walk *w, const struct stat *st, int rules, int last)
{
	int own = last && (rules & WALK_OWN) != 0;
	uid_t me = geteuid();

	if (!own && (rules & WALK_TRUSTED) == 0)
		return 0;
	if (own && st->st_uid != me)
		return fault(w, WALK_NOT_OURS, EPERM);
	if ((rules & WALK_TRUSTED) != 0 && st->st_uid != me && st->st_uid != 0)
		return fault(w, WALK_NOT_OURS, EPERM);
	if (((st->st_mode & S_IWOTH) != 0 || ((st->st_mode & S_IWGRP) != 0 &&
	    !private_group(st->st_gid, st->st_uid))) &&
	    (own || (st->st_mode & S_ISVTX) == 0))
		return fault(w, WALK_WRITABLE, EPERM);
	return 0;
}

/* ---- Symbolic links ------------------------------------------------------ */

/*
 * The kernel's rule for protected_symlinks (may_follow_link() in Linux's
 * fs/namei.c), kept whether the system turns it on or not: the link
 * (its status in *link) in w->dir is followed when it is ours or root's,
 * or its directory is not both sticky and writable by all (then no one
 * else could have put it there), or the link's owner owns that
 * directory.  Else WALK_LINK_REFUSED, with its owner and its directory.
 */
static int
may_follow(struct path_walk *w, const struct stat *link)
{
	if (fstat(w->dir, &w->where) == -1)
		return fault(w, WALK_ERRNO, errno);
	if (link->st_uid == geteuid() || link->st_uid == 0)
		return 0;
	/*
	 * Stricter than the kernel, which also follows a link in its owner's
	 * own directory: there its owner could point it anywhere, and a
	 * root run would write where that user cannot.  So another user's
	 * link is followed only where that user could not have put it: a
	 * directory not theirs and open to no one but its owner.
	 */
	if (w->where.st_uid != link->st_uid &&
	    (w->where.st_mode & (S_IWGRP | S_IWOTH)) == 0)
		return 0;
	w->owner = link->st_uid;
	return fault(w, WALK_LINK_REFUSED, EPERM);
}

/*
 * Whether shown, a directory as walked, is one of /proc/PID/fd, where
 * /dev/stdout and /dev/fd/N lead on Linux: its links name a descriptor's
 * file, whose text ("pipe:[N]", or a path that another file may have
 * taken since) is not where it is.
 */
static int
descriptors(const char *shown)
{
	size_t len = strlen(shown);

	return strncmp(shown, "/proc/", 6) == 0 && len > 9 &&
	    strcmp(shown + len - 3, "/fd") == 0;
}

/* ---- The walk ------------------------------------------------------------ */

/* dir's path as walked, for messages: shown, then "/" and name. */
static void
join(char *shown, size_t size, const char *name)
{
	size_t len = strlen(shown);

	(void)snprintf(shown + len, size - len, "%s%s",
	    len == 0 || shown[len - 1] == '/' ? "" : "/", name);
}

/*
 * w->dir open on the directory where the walk of k->rest starts, / or
 * the current one; WALK_TRUSTED vouches for it (a caller that wants all
 * the way vouched for gives a path from /).
 */
static int
start_at(struct path_walk *w, struct walking *k)
{
	int root = k->rest[0] == '/', fd = w->dir;
	struct stat st;

	w->dir = -1;
	if (fd != -1 && close(fd) == -1)
		return fault(w, WALK_ERRNO, errno);
	(void)snprintf(k->shown, sizeof(k->shown), "%s", root ? "/" : "");
	(void)snprintf(w->at, sizeof(w->at), "%s", root ? "/" : ".");
	w->len = root && k->links == 0 ? 1 : 0;
	w->last = 0;
	if ((w->dir = open(root ? "/" : ".", SEARCH_ONLY | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return fault(w, WALK_ERRNO, errno);
	if ((k->rules & WALK_TRUSTED) == 0)
		return 0;
	if (fstat(w->dir, &st) == -1)
		return fault(w, WALK_ERRNO, errno);
	return vouch(w, &st, k->rules, 0);
}

/*
 * Whether a name is the path's last: what follows it is nothing but "/",
 * and, on the way to a directory (dots), "." components.  A file's
 * "/." after it would ask for a directory, so it is not its last.
 */
static int
is_last(const char *rest, int dots)
{
	for (;;) {
		rest += strspn(rest, "/");
		if (*rest == '\0')
			return 1;
		if (!dots || rest[0] != '.' ||
		    (rest[1] != '/' && rest[1] != '\0'))
			return 0;
		rest++;
	}
}

/*
 * The name the walk is at, for a fault there: w->at as walked (past the
 * links followed), w->len the bytes of the path as given that lead to it
 * (0 past a link), w->last.
 */
static void
at_name(struct path_walk *w, const struct walking *k, const char *name,
    int last)
{
	(void)snprintf(w->at, sizeof(w->at), "%s", k->shown);
	join(w->at, sizeof(w->at), name);
	w->len = k->links == 0 ? (size_t)(name - k->rest) + strlen(name) : 0;
	w->last = last;
}

/*
 * The status of name in w->dir, not following it, in w->st: 1; 0 when it
 * is not there (st_mode 0); -1.  With WALK_MAKE a directory missing on
 * the way, or where a WALK_TO_DIR walk leads, is made first, 0700
 * (another run may be first).
 */
static int
look_up(struct path_walk *w, const struct walking *k, const char *name,
    int last)
{
	int make = (k->rules & WALK_MAKE) != 0 &&
	    (!last || (k->rules & WALK_TO_DIR) != 0);

	if (fstatat(w->dir, name, &w->st, AT_SYMLINK_NOFOLLOW) == 0)
		return 1;
	if (errno == ENOENT && make && (mkdirat(w->dir, name, 0700) == 0 ||
	    errno == EEXIST) &&
	    fstatat(w->dir, name, &w->st, AT_SYMLINK_NOFOLLOW) == 0)
		return 1;
	memset(&w->st, 0, sizeof(w->st));
	return errno == ENOENT ? 0 : fault(w, WALK_ERRNO, errno);
}

/*
 * The walk's end at name in w->dir, which is there (w->st) or not yet
 * (st_mode 0, for the caller to make): a directory is not a file.
 */
static int
arrive(struct path_walk *w, const char *name)
{
	if (S_ISDIR(w->st.st_mode))
		return fault(w, WALK_ERRNO, EISDIR);	/* through a link too */
	(void)snprintf(w->name, sizeof(w->name), "%s", name);
	return 0;
}

/*
 * The symbolic link at name (w->st): refused under WALK_NO_LINKS, past
 * WALK_LINKS_MAX, or where may_follow() says no; else its text takes its
 * place in what is left of the path.  The path's last name, when it is a
 * link of /proc/PID/fd, is not read but opened through (w->follow): 1.
 * Else 0, or -1.
 */
static int
follow(struct path_walk *w, struct walking *k, const char *name,
    const char *more, int last)
{
	char text[PATH_MAX], next[PATH_MAX];
	ssize_t n;

	if ((k->rules & WALK_NO_LINKS) != 0)
		return fault(w, WALK_LINK, EPERM);
	if (++k->links > WALK_LINKS_MAX)
		return fault(w, WALK_TOO_MANY_LINKS, EPERM);
	if (may_follow(w, &w->st) == -1)
		return -1;
	if (last && (k->rules & WALK_TO_DIR) == 0 && descriptors(k->shown)) {
		if (fstatat(w->dir, name, &w->st, 0) == -1)
			return fault(w, WALK_ERRNO, errno);
		w->follow = 1;
		return arrive(w, name) == -1 ? -1 : 1;
	}
	if ((n = readlinkat(w->dir, name, text, sizeof(text) - 1)) == -1)
		return fault(w, WALK_ERRNO, errno);
	text[n] = '\0';
	if (snprintf(next, sizeof(next), "%s%s%s", text, last ? "" : "/",
	    last ? "" : more) >= (int)sizeof(next))
		return fault(w, WALK_ERRNO, ENAMETOOLONG);
	memcpy(k->rest, next, strlen(next) + 1);
	if (*k->rest == '\0')
		return fault(w, WALK_ERRNO, ENOENT);
	return *k->rest == '/' ? start_at(w, k) : 0;
}

/*
 * Into the directory name, as w->dir, with O_NOFOLLOW: a link swapped in
 * since it was looked at fails, and under WALK_NO_LINKS is said to be one,
 * whatever the system says for O_NOFOLLOW with O_DIRECTORY there (Linux
 * ENOTDIR, FreeBSD EMLINK, others ELOOP).  Vouched for (WALK_TRUSTED,
 * WALK_OWN) as it is once open.
 */
static int
enter(struct path_walk *w, struct walking *k, const char *name, int last)
{
	int to_dir = last && (k->rules & WALK_TO_DIR) != 0, fd, e;
	struct stat st;

	if ((fd = openat(w->dir, name, (to_dir ? O_RDONLY : SEARCH_ONLY) |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		e = errno;
		if ((k->rules & WALK_NO_LINKS) != 0 && fstatat(w->dir, name,
		    &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
			return fault(w, WALK_LINK, EPERM);
		return fault(w, WALK_ERRNO, e);
	}
	if (close(w->dir) == -1) {
		w->dir = fd;
		return fault(w, WALK_ERRNO, errno);
	}
	w->dir = fd;
	join(k->shown, sizeof(k->shown), name);
	if ((k->rules & (WALK_TRUSTED | WALK_OWN)) == 0)
		return 0;
	if (fstat(fd, &st) == -1)
		return fault(w, WALK_ERRNO, errno);
	return vouch(w, &st, k->rules, last);
}

/*
 * Walks path one name at a time, as the kernel does, but from directory
 * descriptors, each name looked at before it is used and never followed
 * behind that look's back.
 */
static int
walk(struct path_walk *w, struct walking *k, const char *path)
{
	char *name = k->rest, *more;
	int last, found, to_dir = (k->rules & WALK_TO_DIR) != 0;

	if (*path == '\0')
		return fault(w, WALK_ERRNO, ENOENT);
	if (snprintf(k->rest, sizeof(k->rest), "%s", path) >=
	    (int)sizeof(k->rest))
		return fault(w, WALK_ERRNO, ENAMETOOLONG);
	if (start_at(w, k) == -1)
		return -1;
	for (;;) {
		name += strspn(name, "/");
		if (*name == '\0')	/* "/", or a link to it */
			return fault(w, to_dir ? WALK_NO_NAME : WALK_ERRNO,
			    EISDIR);
		more = name + strcspn(name, "/");
		if (*more != '\0')
			*more++ = '\0';
		last = is_last(more, to_dir);
		at_name(w, k, name, last);
		if (strcmp(name, ".") == 0) {	/* the directory it is in */
			join(k->shown, sizeof(k->shown), name);
			name = more;
			continue;
		}
		if (strlen(name) > NAME_MAX)
			return fault(w, WALK_ERRNO, ENAMETOOLONG);
		/* WALK_TRUSTED vouches for the way down: ".." leaves it. */
		if ((k->rules & WALK_TRUSTED) != 0 && strcmp(name, "..") == 0)
			return fault(w, WALK_DOTDOT, EPERM);
		if ((found = look_up(w, k, name, last)) == -1)
			return -1;
		if (found == 0 && (!last || to_dir))
			return fault(w, WALK_ERRNO, ENOENT);
		if (S_ISLNK(w->st.st_mode)) {
			if ((found = follow(w, k, name, more, last)) != 0)
				return found == 1 ? 0 : -1;
			name = k->rest;
			continue;
		}
		if (last && !to_dir)
			return arrive(w, name);
		if (!S_ISDIR(w->st.st_mode))
			return fault(w, WALK_ERRNO, ENOTDIR);
		if (enter(w, k, name, last) == -1)
			return -1;
		if (last)
			return 0;
		name = more;
	}
}

/*
 * Walks path under rules (WALK_*).  To a file: w->dir open on the
 * directory that holds w->name, what the path leads to, with its status
 * in w->st (st_mode 0: not there yet); a directory there is EISDIR.  To
 * a directory (WALK_TO_DIR): w->dir open on it, to read.  0; or -1 with
 * errno, nothing open, and why in w->fault and where in w->at, w->len and
 * w->last, for the caller's own words.
 */
int
path_walk(struct path_walk *w, const char *path, int rules)
{
	struct walking k;

	memset(w, 0, sizeof(*w));
	w->dir = -1;
	k.shown[0] = '\0';
	k.links = 0;
	k.rules = rules;
	if (walk(w, &k, path) == 0)
		return 0;
	if (w->dir != -1)
		(void)close(w->dir);	/* read only: nothing to lose */
	w->dir = -1;
	memset(&w->st, 0, sizeof(w->st));
	errno = w->err;
	return -1;
}

/*
 * Whether the file that fd holds open, reached by name in a directory
 * that a walk led to, is retry's own: a regular file of the user's and,
 * with one_name, of no other name (a hard link planted to another file
 * would make retry write there).  WALK_OK with its status in *st; else
 * the fault (WALK_ERRNO: errno says why).
 */
enum walk_fault
path_own_file(int fd, int one_name, struct stat *st)
{
	if (fstat(fd, st) == -1)
		return WALK_ERRNO;
	if (!S_ISREG(st->st_mode))
		return WALK_NOT_REGULAR;
	if (st->st_uid != geteuid())
		return WALK_NOT_OURS;
	/* 0: replaced since it was opened (by a rename, or gone): the file
	 * that was opened, whole, all the same. */
	if (one_name && st->st_nlink > 1)
		return WALK_OTHER_NAME;
	return WALK_OK;
}
