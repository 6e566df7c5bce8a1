/* SPDX-License-Identifier: ISC */
/*
 * The plumbing between retry's standard streams and each attempt's: input
 * replayed from a copy on disk, output matched line by line or held in a
 * file until the attempt ends.  Nothing here blocks: the run loop's
 * poll() says which descriptor is ready, and no write is larger than what
 * the descriptor takes without waiting.
 */
#ifndef RELAY_H
#define RELAY_H

#include <sys/types.h>

#include <limits.h>
#include <poll.h>
#include <regex.h>

#include "match.h"

#define CHUNK		65536	/* one read or write: a default Linux pipe */
#define RELAY_NFDS	4	/* most descriptors relay_poll() fills */
#define REPLAY_BOUND	(16 << 20)	/* kept of a piped stdin without -I */
#define HINT_KEPT	1024	/* --hint-from-stderr: the lines kept */
#define HINT_LINE_KEPT	255	/* of each line, at most */
#define TAIL_KEPT	10240	/* RETRY_LOG: the attempt's last output */

/*
 * What the attempts get of a standard input that is a pipe or a socket
 * (a regular file is rewound, a terminal or a device shared as it is).
 */
enum input {
	INPUT_BOUNDED,	/* the default: replayed while REPLAY_BOUND holds it */
	INPUT_REPLAYED,	/* --replay-stdin: replayed, any size, any kind */
	INPUT_SHARED	/* --share-stdin: never read; each attempt reads on */
};

/*
 * How much one of retry's own streams takes at once without making retry
 * wait for its reader.  retry never sets O_NONBLOCK on them: their open
 * file descriptions are shared with the caller.
 */
enum sink {
	SINK_SMALL,	/* PIPE_BUF, once poll(2) says it is writable */
	SINK_FILE,	/* a regular file or /dev/null: any amount */
	SINK_PIPE,	/* Linux's splice(2) and tee(2), which never wait */
	SINK_NONE	/* retry cannot write it (closed): read, matched, dropped */
};

/* Output copied to one of retry's own streams: a child's pipe or held file. */
struct pump {
	int		 from, to;	/* -1 when closed */
	int		 file;		/* from is the held file, read at pos */
	enum sink	 sink;		/* what `to` takes */
	int		 full;		/* `to` took nothing: wait until it does */
	int		 draining;	/* the attempt ended: read what is left */
	int		 unranged;	/* copy_file_range(2) refused file to `to` */
	off_t		 pos;
	size_t		 off, len;	/* in buf, still to be written */
	size_t		 linelen;	/* of the line begun in line */
	int		 skipping;	/* past LINEMAX, until the newline */
	char		*buf;		/* CHUNK bytes, in struct relay */
	char		*line;		/* LINEMAX bytes, in struct relay */
};

struct relay {
	const regex_t	*on, *stop;	/* --on-output, --stop-on-output */
	struct matcher	 m_on, m_stop;	/* the same, and how to go faster */
	int		 on_hit, stop_hit;
	int		 hint_watch;	/* --hint-from-stderr */
	size_t		 hint_len;	/* in hint, below */
	int		 hint_status;	/* hint begins with a status line */

	int		 rewind;	/* stdin is a regular file */
	off_t		 start_offset;
	int		 replay;	/* stdin copied for each attempt */
	off_t		 bound;		/* copied at most (0: no bound) */
	int		 cut;		/* more came than that: the copy is cut */
	int		 spill_error;	/* no file past memory: errno, or 0 */
	int		 unkept;	/* the file had no room: errno, or 0 */
	size_t		 pending;	/* read then, in mem: to pass on */
	int		 in_pipe;	/* stdin is a pipe: spliced to the copy */
	int		 copy_spliced;	/* the copy is spliced to the attempt */
	int		 copy, to_child, source_eof;	/* copy -1: in mem */
	int		 child_full;	/* to_child took nothing: wait until it does */
	off_t		 copied, fed;
	int		 child_in;	/* the attempt's end of its stdin: what
					 * it left unread is counted there */
	off_t		 given;		/* to the attempt's stdin, all told */
	off_t		 passed;	/* of stdin, passed on unkept */
	off_t		 read_most;	/* of the copy, by one attempt */
	off_t		 read_passed;	/* of what passed, by the attempts */
	size_t		 feed_off, feed_len;	/* see feed_buffered, pass_input */

	int		 count_out;	/* stdout a pipe or socket: a pump counts */
	off_t		 out_start;	/* stdout a file: its offset, else -1 */
	int		 out_append;	/* that file is opened with O_APPEND */
	int		 out_counted;	/* whose offset counts (stdout, the
					 * attempt's own opening), or -1 */
	off_t		 out_bytes;	/* the attempt put on retry's stdout */

	int		 held;		/* --buffer-stdout: the file, or -1 */
	int		 unheld;	/* it had no room: errno, or 0 */
	int		 resume;	/* then the attempt's pipe, after it */
	size_t		 unheld_len;	/* in unheld_buf, after it too */
	int		 ended;		/* the attempt has ended */
	int		 last;		/* the attempt is the run's last */
	int		 hold_all;	/* -Q: the spool both streams go to (stderr
				   once it failed), or -1 */
	int		 released;	/* the held output has gone out */
	enum sink	 sink[3];	/* what retry's stdout and stderr take */
	struct pump	 out, err;
	int		 child_fd[3];	/* the attempt's stdio; -1: retry's own */
	const char	*failed;	/* what failed, errno tells why */

	int		 tail_wanted;	/* RETRY_LOG: keep the last output */
	int		 tail_of[3];	/* of stdout, of stderr: a pump for it */
	int		 tail_one;	/* both are one file: one pump for both */
	size_t		 tail_head, tail_len;	/* the ring: oldest, how much */

	/*
	 * The buffers last, after every small field: a run that relays
	 * nothing touches none of their pages (each first touch is a page
	 * fault), one that relays only some, only those.
	 */
	char		 hint[HINT_KEPT];	/* the attempt's last status line
					   and hint headers after it */
	char		 chunk[CHUNK];
	char		 feed[CHUNK];
	char		 outbuf[CHUNK], errbuf[CHUNK];
	char		 outline[LINEMAX], errline[LINEMAX];
	char		 mem[CHUNK];	/* the copy's start, without -I */
	char		 unheld_buf[CHUNK];	/* what the held file refused */
	char		 tail[TAIL_KEPT];	/* the last output, a ring */
};

int	relay_init(struct relay *, enum input, int, int, int, int,
	    const regex_t *, const regex_t *);
void	relay_last(struct relay *, int);
int	relay_can_keep(int);
void	relay_keep_tail(struct relay *);
const char *relay_tail(struct relay *, size_t *);
int	relay_patterns(struct relay *, const char *, const char *);
int	relay_prepare(struct relay *);
int	relay_forked(struct relay *);
int	relay_poll(struct relay *, struct pollfd *, int *);
int	relay_service(struct relay *, const struct pollfd *, int);
int	relay_output_done(const struct relay *);
const char *relay_hint(const struct relay *);
int	relay_attempt_ended(struct relay *);
int	relay_release(struct relay *, int);
int	relay_drop(struct relay *);
int	relay_reader_gone(int);
off_t	relay_unread(const struct relay *);

void	relay_match_text(struct relay *, char *, size_t, int);

#endif
