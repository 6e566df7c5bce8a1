/*
 * The plumbing between retry's standard streams and each attempt's: input
 * replayed from a copy on disk, output matched line by line or held in a
 * file until the attempt ends.  Nothing here blocks: the run loop's
 * poll() says which descriptor is ready.
 */
#ifndef RELAY_H
#define RELAY_H

#include <sys/types.h>

#include <limits.h>
#include <poll.h>
#include <regex.h>

#define LINEMAX		4096	/* longer lines are matched on their start */
#define CHUNK		65536
#define RELAY_NFDS	4	/* most descriptors relay_poll() fills */

/* A child's output pipe copied to one of retry's own streams. */
struct pump {
	/* The small fields first: a run that relays nothing touches no more. */
	int		 from, to;	/* -1 when closed */
	size_t		 off, len;
	size_t		 linelen;
	int		 skipping;	/* past LINEMAX, until the newline */
	int		 draining;	/* the attempt ended: read what is left */
	char		 buf[PIPE_BUF];	/* one write of this size never blocks */
	char		 line[LINEMAX];
};

struct relay {
	const regex_t	*on, *stop;	/* --on-output, --stop-on-output */
	int		 on_hit, stop_hit;

	int		 rewind;	/* stdin is a regular file */
	off_t		 start_offset;
	int		 replay;	/* stdin copied to a file for each attempt */
	int		 copy, to_child, source_eof;
	off_t		 copied, fed;

	int		 held;		/* --buffer-stdout: the file, or -1 */
	int		 released;	/* the held output has gone out */
	struct pump	 out, err;
	int		 child_fd[3];	/* the attempt's stdio; -1: retry's own */

	char		 chunk[CHUNK];
	const char	*failed;	/* what failed, errno tells why */
};

int	relay_init(struct relay *, int, int, const regex_t *, const regex_t *);
int	relay_prepare(struct relay *);
int	relay_forked(struct relay *);
int	relay_poll(struct relay *, struct pollfd *, int *);
int	relay_service(struct relay *, const struct pollfd *, int);
int	relay_output_done(const struct relay *);
int	relay_attempt_ended(struct relay *);
int	relay_release(struct relay *, int);
int	relay_reader_gone(int);

#endif
