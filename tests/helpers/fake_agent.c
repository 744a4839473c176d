// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * fake_agent: a lying tsync agent for the host's end-to-end tests. It
 * speaks the protocol well enough for `tsync-host sync` and `record` and
 * lies where it is told to:
 *
 *   fake_agent [--cpus N] [--stall round|trace_stop] [--rounds fail] [--stream MODE]
 *              [--meta endless]
 *
 *   --cpus N       CPUs claimed in SESSION_REPLY (default 2; rounds on any
 *                  of them are answered)
 *   --stall round  answers SYNC_START, then each probe only after 3 s
 *                  (under the host's 5 s I/O timeout): a round that never
 *                  ends
 *   --stall trace_stop  never answers TRACE_STOP
 *   --rounds fail  refuses every sync round (SYNC_READY with NO_CPU)
 *   --stream good  valid ring-buffer pages, a few per 10 ms (default)
 *   --stream flood valid pages as fast as the socket takes them
 *   --stream garbage  pages of random bytes
 *   --meta endless META_CHUNKs of an unknown kind, without end
 *   --clocks LIST  trace clocks offered in SESSION_REPLY, comma-separated
 *                  (default none listed)
 *   --jump N,NS    from its round N on (counted from 0 over all CPUs) its
 *                  clock reads NS ns later, as if stepped: says "fake: clock
 *                  jumped by NS ns" at that round
 *   --jump-ms T,NS the same from the first round T ms after its first one
 *                  (a host that retries rounds does not move the step)
 *   --versions MIN,MAX  speaks protocol versions MIN..MAX (default 1,1) and
 *                  answers the HELLO as an agent of that range does: an
 *                  ERROR (VERSION) when the host's range does not meet it
 *
 * It listens on tcp:127.0.0.1 (an ephemeral port), prints "listening on
 * ENDPOINT" on stdout when ready, serves one host, and logs each step on
 * stderr ("fake: round started", "fake: got TRACE_STOP", ...) so tests can
 * wait for a phase. Metadata (when not lying) is this machine's, collected
 * from the top tracefs instance. Pages are 4096 bytes, 64-bit layout.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "common/wire/msgio.h"
#include "common/base/timeutil.h"
#include "common/tracemeta/tracemeta.h"
#include "common/net/transport.h"
#include "proto/proto.h"

#define PAGE 4096
#define MAX_STREAMS 64

struct fake {
	uint32_t ncpus;
	const char *stall;
	const char *rounds_mode;	/* --rounds: "fail" */
	const char *stream;
	const char *meta;
	const char *clocks;
	unsigned int ver_min, ver_max;	/* --versions */
	uint32_t rounds;		/* rounds answered */
	uint32_t jump_round;		/* --jump: from this round on ... */
	int64_t jump_ns;		/* ... the clock reads this much later */
	int64_t jump_after_ns;		/* --jump-ms: or from this long after ... */
	int64_t first_round_ns;		/* ... the first round (0: none yet) */
	bool jumped;			/* the step is in */
	struct tsync_listener *l;
	int ctl;
	struct tsync_decode_ctx dctx;
	int streams[MAX_STREAMS];
	pthread_t th[MAX_STREAMS];
	uint32_t nstreams;
	pthread_t acceptor;
	bool accepting;
	atomic_bool stop;
};

struct stream_arg {
	struct fake *f;
	int fd;
	uint32_t cpu;
};

/* Logs one step on stderr. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "fake: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Sends @m on @fd or exits. */
static void send_or_die(int fd, const struct tsync_msg *m)
{
	int ret = tsync_msg_send(fd, m, tsync_deadline_ms(10000));

	if (ret) {
		say("sending %s: %s", tsync_msg_name(m->type), strerror(-ret));
		exit(1);
	}
}

/* Fills @page with a valid 64-bit ring-buffer page: @n small events of an
 * unknown type, 1 us apart. */
static void good_page(uint8_t *page, uint64_t ts, int n)
{
	uint64_t commit = 0;

	memset(page, 0, PAGE);
	memcpy(page, &ts, 8);
	for (int i = 0; i < n && commit + 20 <= PAGE - 16; i++) {
		uint32_t hdr = 4u | (1000u << 5);	/* type_len 4: 16 bytes */
		uint16_t type = 65000;

		memcpy(page + 16 + commit, &hdr, 4);
		memcpy(page + 16 + commit + 4, &type, 2);
		commit += 20;
	}
	memcpy(page + 8, &commit, 8);
}

/* Body of one stream: pages as --stream says until stopped or refused. */
static void *stream_thread(void *arg)
{
	struct stream_arg *a = arg;
	uint8_t page[PAGE];
	uint64_t pages = 0;

	while (!atomic_load(&a->f->stop)) {
		if (!strcmp(a->f->stream, "garbage")) {
			if (getrandom(page, sizeof(page), 0) != sizeof(page))
				break;
		} else {
			good_page(page, (uint64_t)tsync_now_ns(), 50);
		}
		if (write(a->fd, page, sizeof(page)) != sizeof(page))
			break;
		pages++;
		if (!strcmp(a->f->stream, "good") && pages % 4 == 0)
			usleep(10000);
	}
	say("stream %u: %llu pages sent", a->cpu, (unsigned long long)pages);
	shutdown(a->fd, SHUT_WR);
	free(a);
	return NULL;
}

/* Thread: accepts the data connections of a trace (in whatever order the
 * host opens them, meanwhile the control connection is served) and starts
 * their streams. */
static void *accept_streams(void *arg)
{
	struct fake *f = arg;
	uint32_t n = f->ncpus;

	for (uint32_t i = 0; i < n && i < MAX_STREAMS; i++) {
		struct stream_arg *a = calloc(1, sizeof(*a));
		struct tsync_msg m;
		char why[256];
		int fd = tsync_accept(f->l, NULL);

		if (fd < 0 || !a || tsync_msg_recv_expect(fd, TSYNC_MSG_HELLO, &m, NULL,
							  tsync_deadline_ms(10000), why, sizeof(why))) {
			say("data connection %u failed", i);
			exit(1);
		}
		a->f = f;
		a->fd = fd;
		a->cpu = m.hello.cpu;
		tsync_msg_init(&m, TSYNC_MSG_HELLO_REPLY);
		m.hello_reply.version = m.hello_reply.ver_min = m.hello_reply.ver_max = 1;
		send_or_die(fd, &m);
		f->streams[f->nstreams] = fd;
		pthread_create(&f->th[f->nstreams++], NULL, stream_thread, a);
	}
	say("streaming %u CPUs", n);
	return NULL;
}

/* Answers one sync round that began with @start. */
static void do_round(struct fake *f, const struct tsync_sync_start *start)
{
	struct tsync_probe_stamps *st = calloc(start->nprobes, sizeof(*st));
	int64_t now = tsync_now_ns(), step;
	struct tsync_msg m;
	char why[256];
	uint32_t n = 0;

	tsync_msg_init(&m, TSYNC_MSG_SYNC_READY);
	m.sync_ready.round_id = start->round_id;
	m.sync_ready.cpu = start->cpu;
	if (f->rounds_mode && !strcmp(f->rounds_mode, "fail")) {
		m.sync_ready.status = TSYNC_ERR_NO_CPU;
		send_or_die(f->ctl, &m);
		say("round refused on CPU %u", start->cpu);
		free(st);
		return;
	}
	send_or_die(f->ctl, &m);
	say("round started on CPU %u", start->cpu);
	if (!f->first_round_ns)
		f->first_round_ns = now;
	step = !f->jump_ns ? 0 : f->jump_after_ns ?
	       (now - f->first_round_ns >= f->jump_after_ns ? f->jump_ns : 0) :
	       (f->rounds >= f->jump_round ? f->jump_ns : 0);
	if (step && !f->jumped)
		say("clock jumped by %lld ns", (long long)step);
	f->jumped = step != 0;
	f->rounds++;
	/* probes until SYNC_END: the host may stop before nprobes */
	for (;;) {
		if (tsync_msg_recv(f->ctl, &m, &f->dctx, tsync_deadline_ms(10000), why,
				   sizeof(why))) {
			say("probe: %s", why);
			exit(1);
		}
		if (m.type == TSYNC_MSG_SYNC_END)
			break;
		if (m.type != TSYNC_MSG_PROBE || n >= start->nprobes) {
			say("unexpected %s in a round", tsync_msg_name(m.type));
			exit(1);
		}
		st[n].seq = m.probe.seq;
		st[n].t2 = tsync_now_ns() + step;
		if (f->stall && !strcmp(f->stall, "round"))
			sleep(3);
		st[n].t3 = tsync_now_ns() + step;
		tsync_probe_send(f->ctl, TSYNC_MSG_PROBE_REPLY, start->round_id, m.probe.seq,
				 tsync_deadline_ms(10000));
		n++;
	}
	tsync_msg_init(&m, TSYNC_MSG_SYNC_STAMPS);
	m.sync_stamps.round_id = start->round_id;
	m.sync_stamps.cpu = start->cpu;
	m.sync_stamps.count = n;
	m.sync_stamps.stamps = st;
	send_or_die(f->ctl, &m);
	free(st);
}

/* Sends one metadata chunk (tracemeta_foreach_part callback). */
static int send_part(void *ctx, unsigned int kind, const char *system, const void *data,
		     size_t len, bool more)
{
	struct fake *f = ctx;
	struct tsync_msg m;

	tsync_msg_init(&m, TSYNC_MSG_META_CHUNK);
	m.meta_chunk.kind = (uint8_t)kind;
	snprintf(m.meta_chunk.system, sizeof(m.meta_chunk.system), "%s", system);
	m.meta_chunk.more = more;
	m.meta_chunk.len = (uint32_t)len;
	m.meta_chunk.data = (uint8_t *)data;
	send_or_die(f->ctl, &m);
	return 0;
}

/* Answers META_REQ: this machine's metadata, or chunks without end. */
static void do_meta(struct fake *f)
{
	struct tracemeta_opts mo = { .kallsyms = false };
	struct tracemeta *tm = NULL;
	struct tsync_msg m;

	say("got META_REQ");
	if (f->meta && !strcmp(f->meta, "endless")) {
		static const uint8_t junk[16];

		for (;;) {
			tsync_msg_init(&m, TSYNC_MSG_META_CHUNK);
			m.meta_chunk.kind = 200;
			m.meta_chunk.more = 1;
			m.meta_chunk.len = sizeof(junk);
			m.meta_chunk.data = (uint8_t *)junk;
			if (tsync_msg_send(f->ctl, &m, tsync_deadline_ms(10000)))
				exit(0);
		}
	}
	if (tracemeta_collect(NULL, &mo, &tm)) {
		say("tracemeta_collect failed");
		exit(1);
	}
	tracemeta_foreach_part(tm, TSYNC_META_CHUNK_MAX, send_part, f);
	tracemeta_free(tm);
	tsync_msg_init(&m, TSYNC_MSG_META_END);
	send_or_die(f->ctl, &m);
}

/* Answers TRACE_STOP (unless stalling): streams end, then TRACE_STOPPED. */
static void do_trace_stop(struct fake *f)
{
	struct tsync_msg m;

	say("got TRACE_STOP");
	if (f->stall && !strcmp(f->stall, "trace_stop"))
		return;
	atomic_store(&f->stop, true);
	if (f->accepting)
		pthread_join(f->acceptor, NULL);
	f->accepting = false;
	for (uint32_t i = 0; i < f->nstreams; i++)
		pthread_join(f->th[i], NULL);
	f->nstreams = 0;
	tsync_msg_init(&m, TSYNC_MSG_TRACE_STOPPED);
	send_or_die(f->ctl, &m);
}

/* Hello and session on the control connection. */
static void open_session(struct fake *f)
{
	struct tsync_msg m;
	uint8_t hmin, hmax;
	char why[256];

	if (tsync_msg_recv_expect(f->ctl, TSYNC_MSG_HELLO, &m, NULL, tsync_deadline_ms(10000),
				  why, sizeof(why))) {
		say("hello: %s", why);
		exit(1);
	}
	hmin = m.hello.ver_min;
	hmax = m.hello.ver_max;
	tsync_msg_init(&m, TSYNC_MSG_HELLO_REPLY);
	if (tsync_proto_negotiate((uint8_t)f->ver_min, (uint8_t)f->ver_max, hmin, hmax,
				  &m.hello_reply.version, &m)) {
		say("refused: %s", m.error.reason);
		send_or_die(f->ctl, &m);
		exit(0);
	}
	m.hello_reply.ver_min = (uint8_t)f->ver_min;
	m.hello_reply.ver_max = (uint8_t)f->ver_max;
	send_or_die(f->ctl, &m);
	if (tsync_msg_recv_expect(f->ctl, TSYNC_MSG_SESSION_REQ, &m, NULL,
				  tsync_deadline_ms(10000), why, sizeof(why))) {
		say("session: %s", why);
		exit(1);
	}
	tsync_msg_init(&m, TSYNC_MSG_SESSION_REPLY);
	m.session_reply.ncpus = f->ncpus;
	m.session_reply.caps = TSYNC_CAP_TRACE;	/* it records (or lies that it does) */
	m.session_reply.page_size = PAGE;
	m.session_reply.trace_id = 42;
	m.session_reply.session_id = 1;
	snprintf(m.session_reply.name, sizeof(m.session_reply.name), "fake");
	snprintf(m.session_reply.clock, sizeof(m.session_reply.clock), "local");
	for (const char *c = f->clocks; c && *c && m.session_reply.nclocks < TSYNC_MAX_CLOCKS;) {
		size_t n = strcspn(c, ",");

		snprintf(m.session_reply.clocks[m.session_reply.nclocks++], TSYNC_CLOCK_NAME_MAX,
			 "%.*s", (int)n, c);
		c += n + (c[n] == ',');
	}
	send_or_die(f->ctl, &m);
	f->dctx.ncpus = f->ncpus;
	say("session open, %u CPUs", f->ncpus);
}

/* Serves the control connection until the host leaves. */
static void serve(struct fake *f)
{
	struct tsync_msg m;
	char why[256];

	open_session(f);
	for (;;) {
		int ret = tsync_msg_recv(f->ctl, &m, &f->dctx, tsync_deadline_ms(600000),
					 why, sizeof(why));

		if (ret) {
			say("host gone: %s", why);
			return;
		}
		switch (m.type) {
		case TSYNC_MSG_SYNC_START:
			do_round(f, &m.sync_start);
			break;
		case TSYNC_MSG_SYNC_RESULT:
			break;
		case TSYNC_MSG_TRACE_START:
			say("got TRACE_START");
			tsync_msg_free(&m);
			tsync_msg_init(&m, TSYNC_MSG_TRACE_STARTED);
			m.trace_started.ncpus = f->ncpus;
			send_or_die(f->ctl, &m);
			pthread_create(&f->acceptor, NULL, accept_streams, f);
			f->accepting = true;
			break;
		case TSYNC_MSG_META_REQ:
			do_meta(f);
			break;
		case TSYNC_MSG_TRACE_STOP:
			do_trace_stop(f);
			break;
		case TSYNC_MSG_BYE:
			say("BYE");
			return;
		default:
			say("unexpected %s", tsync_msg_name(m.type));
			tsync_msg_free(&m);
			return;
		}
	}
}

int main(int argc, char **argv)
{
	struct fake f = { .ncpus = 2, .stream = "good", .ver_min = 1, .ver_max = 1 };
	struct tsync_endpoint ep;
	char err[256];

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--cpus"))
			f.ncpus = (uint32_t)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--stall"))
			f.stall = argv[i + 1];
		else if (!strcmp(argv[i], "--rounds"))
			f.rounds_mode = argv[i + 1];
		else if (!strcmp(argv[i], "--stream"))
			f.stream = argv[i + 1];
		else if (!strcmp(argv[i], "--meta"))
			f.meta = argv[i + 1];
		else if (!strcmp(argv[i], "--clocks"))
			f.clocks = argv[i + 1];
		else if (!strcmp(argv[i], "--versions") &&
			 sscanf(argv[i + 1], "%u,%u", &f.ver_min, &f.ver_max) == 2 &&
			 f.ver_min >= 1 && f.ver_min <= f.ver_max && f.ver_max <= 255)
			;
		else if (!strcmp(argv[i], "--jump") &&
			 sscanf(argv[i + 1], "%u,%" SCNd64, &f.jump_round, &f.jump_ns) == 2)
			;
		else if (!strcmp(argv[i], "--jump-ms") &&
			 sscanf(argv[i + 1], "%" SCNd64 ",%" SCNd64, &f.jump_after_ns,
				&f.jump_ns) == 2 && f.jump_after_ns > 0)
			f.jump_after_ns *= NSEC_PER_MSEC;
		else
			return 2;
	}
	if (tsync_endpoint_parse("tcp:127.0.0.1:0", TSYNC_EP_ALLOW_PORT0, &ep, err, sizeof(err)) ||
	    tsync_listen(&ep, 64, &f.l, err, sizeof(err))) {
		fprintf(stderr, "fake_agent: %s\n", err);
		return 1;
	}
	printf("listening on %s\n", tsync_listener_name(f.l));
	fflush(stdout);
	f.ctl = tsync_accept(f.l, NULL);
	if (f.ctl < 0)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	serve(&f);
	atomic_store(&f.stop, true);
	if (f.accepting) {
		/* the host left before opening every stream */
		pthread_cancel(f.acceptor);
		pthread_join(f.acceptor, NULL);
	}
	for (uint32_t i = 0; i < f.nstreams; i++)
		pthread_join(f.th[i], NULL);
	tsync_listener_close(f.l);
	return 0;
}
