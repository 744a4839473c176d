// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tsync_rawclient: speaks the tsync protocol to an agent one scripted step
 * at a time, so end-to-end tests can drive exact sequences (refusals,
 * misuse, malformed input) that tsync-host never sends.
 *
 *   tsync_rawclient [-t MS] [-q] ENDPOINT [COMMAND]...
 *
 * Each COMMAND is one argument; without any, commands are read one per line
 * from stdin ('#' starts a comment). Every wait is bounded by -t (default
 * 10000 ms). Every message received is printed on stdout as one line
 * "CONN: TYPE field=value..." so scripts can grep it. The first failing
 * step prints "tsync_rawclient: step N (COMMAND): reason" on stderr and the
 * exit status is 1 (2 for bad usage).
 *
 * Connections are named (default "c"); the last one opened or used is the
 * current one, on which the commands below act. A script that starts with
 * anything but connect opens "c" first.
 *
 *   connect [NAME]            open a connection to ENDPOINT
 *   use NAME | close [NAME]
 *   hello control [VMIN VMAX] HELLO, expect HELLO_REPLY
 *   hello data SID CPU SECRET [VMIN VMAX]
 *                             HELLO of a data stream, expect HELLO_REPLY.
 *                             SID: "sid" (the last SESSION_REPLY's) or a
 *                             number; SECRET: "secret" (that session's),
 *                             "flip" (it with one bit changed), "zero", or
 *                             64 hex digits
 *   hello_nowait ...          the same without waiting for the reply
 *   session [NAME]            SESSION_REQ, expect SESSION_REPLY (keeps its
 *                             session id, secret and CPU count)
 *   trace_start CLOCK KB [EVENT[=FILTER]]...
 *                             TRACE_START with the option words -e EVENT
 *                             [-f FILTER]... [-b KB] (KB 0: no -b)
 *   trace_words CLOCK WORD... TRACE_START with these option words as they are
 *   trace_stop | meta_req | bye
 *   sync_result ROUND CPU OFFSET [ERR DELAY USED SENT]
 *   clock_req CLOCK           CLOCK_REQ, expect CLOCK_STATE
 *   raw HEX                   sends these bytes as they are
 *   expect TYPE [ERRCODE]     receives one message; it must be TYPE (and an
 *                             ERROR of code ERRCODE, a name like NO_SESSION)
 *   expect_meta               receives META_CHUNKs until META_END; prints a
 *                             summary per kind; fails without HEADER_PAGE
 *   expect_eof                the peer closes without sending more
 *   drain [NAME [FILE]]       a thread reads NAME's raw bytes until EOF
 *                             (into FILE if given)
 *   join [NAME]               waits for that thread: "NAME: drained N bytes"
 *   echo TEXT                 prints TEXT
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <poll.h>
#include <sys/socket.h>

#include "common/net/endpoint.h"
#include "common/base/io.h"
#include "common/wire/msgio.h"
#include "common/base/timeutil.h"
#include "common/net/transport.h"
#include "proto/proto.h"

#define MAX_CONNS	64
#define MAX_ARGS	(1024 + 8)	/* words of a line: 1024 events */

struct conn {
	char name[32];
	int fd;
	pthread_t drainer;
	bool draining;
	int drain_out;		/* file the drained bytes go to, or -1 */
	uint64_t drained;
	int drain_err;
};

struct client {
	struct tsync_endpoint ep;
	int timeout_ms;
	bool quiet;
	struct conn conns[MAX_CONNS];
	int nconns;
	struct conn *cur;
	/* From the last SESSION_REPLY. */
	uint64_t sid;
	uint8_t secret[TSYNC_SECRET_LEN];
	uint32_t ncpus;
	char err[512];
};

/* Formats a step failure into @c->err; returns -1. */
static int __attribute__((format(printf, 2, 3))) fail(struct client *c,
						       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* Returns the connection named @name or NULL. */
static struct conn *find_conn(struct client *c, const char *name)
{
	for (int i = 0; i < c->nconns; i++)
		if (!strcmp(c->conns[i].name, name))
			return &c->conns[i];
	return NULL;
}

/* Returns the deadline of one wait. */
static int64_t deadline(const struct client *c)
{
	return tsync_deadline_ms(c->timeout_ms);
}

/* Parses an unsigned number (base 0) into @v; returns 0 or -1. */
static int parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return (errno || end == s || *end || *s == '-') ? -1 : 0;
}

/* Parses 2*@n hex digits of @s into @out; returns 0 or -1. */
static int parse_hex(const char *s, uint8_t *out, size_t n)
{
	if (strlen(s) != 2 * n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned int b;

		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			return -1;
		out[i] = (uint8_t)b;
	}
	return 0;
}

/* Sends @m on the current connection; returns 0 or -1. */
static int send_msg(struct client *c, const struct tsync_msg *m)
{
	int ret;

	if (!c->cur)
		return fail(c, "no connection");
	ret = tsync_msg_send(c->cur->fd, m, deadline(c));
	if (ret)
		return fail(c, "send %s: %s", tsync_msg_name(m->type),
			    tsync_perr_name(ret));
	return 0;
}

/* Prints one received message as a line. */
static void print_msg(struct client *c, const struct tsync_msg *m)
{
	const char *n = c->cur->name;

	switch (m->type) {
	case TSYNC_MSG_ERROR:
		printf("%s: ERROR code=%s reason=%s\n", n,
		       tsync_err_name(m->error.code), m->error.reason);
		break;
	case TSYNC_MSG_HELLO_REPLY:
		printf("%s: HELLO_REPLY version=%u caps=%#x\n", n,
		       m->hello_reply.version, m->hello_reply.caps);
		break;
	case TSYNC_MSG_SESSION_REPLY:
		printf("%s: SESSION_REPLY ncpus=%u session=%#llx caps=%#x clock=%s nclocks=%u\n",
		       n, m->session_reply.ncpus,
		       (unsigned long long)m->session_reply.session_id,
		       m->session_reply.caps, m->session_reply.clock,
		       m->session_reply.nclocks);
		break;
	case TSYNC_MSG_TRACE_STARTED:
		printf("%s: TRACE_STARTED ncpus=%u\n", n, m->trace_started.ncpus);
		break;
	case TSYNC_MSG_TRACE_STOPPED:
		printf("%s: TRACE_STOPPED count=%u\n", n, m->trace_stopped.count);
		for (uint32_t i = 0; i < m->trace_stopped.count; i++) {
			const struct tsync_cpu_stats *s = &m->trace_stopped.cpus[i];

			printf("%s:   cpu=%u bytes=%llu entries=%llu overrun=%llu dropped=%llu\n",
			       n, s->cpu, (unsigned long long)s->bytes,
			       (unsigned long long)s->entries,
			       (unsigned long long)s->overrun,
			       (unsigned long long)s->dropped);
		}
		break;
	case TSYNC_MSG_CLOCK_STATE: {
		const struct tsync_clock_state *k = &m->clock_state;

		printf("%s: CLOCK_STATE daemon=%s synced=%u stratum=%u status=%d offset=%lld "
		       "bound=%llu clock=%lld realtime=%lld read=%llu master=%s detail=%s\n", n,
		       tsync_clock_source_name(k->source), k->synced, k->stratum, k->status,
		       (long long)k->offset_ns, (unsigned long long)k->bound_ns,
		       (long long)k->clock_ns, (long long)k->realtime_ns,
		       (unsigned long long)k->read_ns, k->master, k->detail);
		break;
	}
	default:
		printf("%s: %s\n", n, tsync_msg_name(m->type));
		break;
	}
	fflush(stdout);
}

/* Receives one message on the current connection into @m; returns 0 or
 * -1. */
static int recv_msg(struct client *c, struct tsync_msg *m)
{
	struct tsync_decode_ctx ctx = { 0 };
	char err[256];
	int ret;

	if (!c->cur)
		return fail(c, "no connection");
	ret = tsync_msg_recv(c->cur->fd, m, &ctx, deadline(c), err, sizeof(err));
	if (ret)
		return fail(c, "receive: %s", err);
	if (!c->quiet || m->type == TSYNC_MSG_ERROR)
		print_msg(c, m);
	return 0;
}

/* Finds the wire error code named @name; returns it or -1. */
static int err_code(const char *name)
{
	for (uint32_t i = 0; i < 64; i++)
		if (!strcmp(tsync_err_name(i), name))
			return (int)i;
	return -1;
}

/* Finds the message type named @name; returns it or -1. */
static int msg_type(const char *name)
{
	for (unsigned int i = 1; i < 256; i++)
		if (tsync_msg_type_known(i) && !strcmp(tsync_msg_name(i), name))
			return (int)i;
	return -1;
}

/* expect TYPE [ERRCODE]. */
static int cmd_expect(struct client *c, int argc, char **argv)
{
	struct tsync_msg m;
	int type, code = -1, ret = 0;

	if (argc < 2 || (type = msg_type(argv[1])) < 0)
		return fail(c, "expect: unknown message type");
	if (argc > 2 && (code = err_code(argv[2])) < 0)
		return fail(c, "expect: unknown error code %s", argv[2]);
	if (recv_msg(c, &m))
		return -1;
	if (m.type != type)
		ret = fail(c, "expected %s, got %s%s%s", argv[1], tsync_msg_name(m.type),
			   m.type == TSYNC_MSG_ERROR ? " " : "",
			   m.type == TSYNC_MSG_ERROR ? m.error.reason : "");
	else if (code >= 0 && m.error.code != (uint32_t)code)
		ret = fail(c, "expected ERROR %s, got %s", argv[2],
			   tsync_err_name(m.error.code));
	else if (type == TSYNC_MSG_SESSION_REPLY) {
		c->sid = m.session_reply.session_id;
		memcpy(c->secret, m.session_reply.secret, sizeof(c->secret));
		c->ncpus = m.session_reply.ncpus;
	}
	tsync_msg_free(&m);
	return ret;
}

/* hello control|data ...; @wait: expect HELLO_REPLY. */
static int cmd_hello(struct client *c, int argc, char **argv, bool wait)
{
	struct tsync_msg m;
	char *expect[] = { "expect", "HELLO_REPLY" };
	int vi = 2;
	uint64_t v;

	tsync_msg_init(&m, TSYNC_MSG_HELLO);
	m.hello.ver_min = TSYNC_PROTO_VERSION_MIN;
	m.hello.ver_max = TSYNC_PROTO_VERSION_MAX;
	if (argc >= 2 && !strcmp(argv[1], "control")) {
		m.hello.kind = TSYNC_CONN_CONTROL;
	} else if (argc >= 5 && !strcmp(argv[1], "data")) {
		m.hello.kind = TSYNC_CONN_DATA;
		m.hello.caps = TSYNC_CAP_TRACE;
		if (!strcmp(argv[2], "sid"))
			m.hello.session_id = c->sid;
		else if (parse_u64(argv[2], &m.hello.session_id))
			return fail(c, "bad session id %s", argv[2]);
		if (parse_u64(argv[3], &v) || v > UINT32_MAX)
			return fail(c, "bad cpu %s", argv[3]);
		m.hello.cpu = (uint32_t)v;
		if (!strcmp(argv[4], "secret") || !strcmp(argv[4], "flip")) {
			memcpy(m.hello.secret, c->secret, sizeof(c->secret));
			if (argv[4][0] == 'f')
				m.hello.secret[TSYNC_SECRET_LEN - 1] ^= 1;
		} else if (strcmp(argv[4], "zero") &&
			   parse_hex(argv[4], m.hello.secret, TSYNC_SECRET_LEN)) {
			return fail(c, "bad secret %s", argv[4]);
		}
		vi = 5;
	} else {
		return fail(c, "usage: hello control|data SID CPU SECRET [VMIN VMAX]");
	}
	if (argc >= vi + 2) {
		uint64_t lo, hi;

		if (parse_u64(argv[vi], &lo) || parse_u64(argv[vi + 1], &hi) ||
		    lo > 255 || hi > 255)
			return fail(c, "bad versions");
		m.hello.ver_min = (uint8_t)lo;
		m.hello.ver_max = (uint8_t)hi;
	}
	if (send_msg(c, &m))
		return -1;
	return wait ? cmd_expect(c, 2, expect) : 0;
}

/* trace_words CLOCK WORD...: the words as a host would send them */
static int cmd_trace_words(struct client *c, int argc, char **argv)
{
	struct tsync_msg m;

	if (argc < 3)
		return fail(c, "usage: trace_words CLOCK WORD...");
	tsync_msg_init(&m, TSYNC_MSG_TRACE_START);
	snprintf(m.trace_start.clock, sizeof(m.trace_start.clock), "%s", argv[1]);
	m.trace_start.flags = TSYNC_TRACE_FL_ARGS;
	m.trace_start.nargs = (uint32_t)(argc - 2);
	m.trace_start.args = argv + 2;
	return send_msg(c, &m);
}

/* trace_start CLOCK KB [EVENT[=FILTER]]... */
static int cmd_trace_start(struct client *c, int argc, char **argv)
{
	char *words[4 * MAX_ARGS + 2];
	struct tsync_msg m;
	uint32_t n = 0;
	uint64_t kb;

	if (argc < 3 || parse_u64(argv[2], &kb) || kb > UINT32_MAX)
		return fail(c, "usage: trace_start CLOCK KB [EVENT[=FILTER]]...");
	tsync_msg_init(&m, TSYNC_MSG_TRACE_START);
	snprintf(m.trace_start.clock, sizeof(m.trace_start.clock), "%s", argv[1]);
	for (int i = 3; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (eq)
			*eq = '\0';
		words[n++] = "-e";
		words[n++] = argv[i];
		if (eq && eq[1]) {	/* "EVENT=": no filter */
			words[n++] = "-f";
			words[n++] = eq + 1;
		}
	}
	if (kb) {
		words[n++] = "-b";
		words[n++] = argv[2];
	}
	m.trace_start.flags = n ? TSYNC_TRACE_FL_ARGS : 0;
	m.trace_start.nargs = n;
	m.trace_start.args = words;
	return send_msg(c, &m);
}

/* sync_result ROUND CPU OFFSET [ERR DELAY USED SENT]. */
static int cmd_sync_result(struct client *c, int argc, char **argv)
{
	uint64_t v[7] = { 0, 0, 0, 100, 1000, 1, 1 };
	struct tsync_msg m;
	char *end;

	if (argc < 4)
		return fail(c, "usage: sync_result ROUND CPU OFFSET [ERR DELAY USED SENT]");
	for (int i = 1; i < argc && i <= 7; i++) {
		if (i == 3) {
			v[2] = (uint64_t)strtoll(argv[3], &end, 0);
			if (*end)
				return fail(c, "bad offset %s", argv[3]);
		} else if (parse_u64(argv[i], &v[i - 1])) {
			return fail(c, "bad number %s", argv[i]);
		}
	}
	tsync_msg_init(&m, TSYNC_MSG_SYNC_RESULT);
	m.sync_result.round_id = (uint32_t)v[0];
	m.sync_result.cpu = (uint32_t)v[1];
	m.sync_result.offset_ns = (int64_t)v[2];
	m.sync_result.error_ns = v[3];
	m.sync_result.delay_ns = v[4];
	m.sync_result.used = (uint32_t)v[5];
	m.sync_result.sent = (uint32_t)v[6];
	return send_msg(c, &m);
}

/* raw HEX: sends the bytes as given. */
static int cmd_raw(struct client *c, int argc, char **argv)
{
	size_t n;
	uint8_t *buf;
	int ret;

	if (argc != 2 || strlen(argv[1]) % 2)
		return fail(c, "usage: raw HEX");
	n = strlen(argv[1]) / 2;
	buf = malloc(n + 1);
	if (!buf || parse_hex(argv[1], buf, n)) {
		free(buf);
		return fail(c, "bad hex");
	}
	ret = tsync_write_full(c->cur->fd, buf, n, deadline(c));
	free(buf);
	return ret ? fail(c, "write: %s", strerror(-ret)) : 0;
}

/* expect_meta: META_CHUNKs until META_END, summarized per kind. */
static int cmd_expect_meta(struct client *c)
{
	uint64_t bytes[16] = { 0 }, parts[16] = { 0 };
	uint64_t chunks = 0;
	struct tsync_msg m;
	bool quiet = c->quiet;
	int ret = 0;

	c->quiet = true;
	for (;;) {
		if (recv_msg(c, &m)) {
			ret = -1;
			break;
		}
		if (m.type == TSYNC_MSG_META_END) {
			tsync_msg_free(&m);
			break;
		}
		if (m.type != TSYNC_MSG_META_CHUNK) {
			ret = fail(c, "expected META_CHUNK, got %s", tsync_msg_name(m.type));
			tsync_msg_free(&m);
			break;
		}
		chunks++;
		if (m.meta_chunk.kind < 16) {
			bytes[m.meta_chunk.kind] += m.meta_chunk.len;
			parts[m.meta_chunk.kind] += !m.meta_chunk.more;
		}
		tsync_msg_free(&m);
	}
	c->quiet = quiet;
	if (ret)
		return ret;
	printf("%s: META chunks=%llu\n", c->cur->name, (unsigned long long)chunks);
	for (int k = 1; k < 16; k++)
		if (bytes[k] || parts[k])
			printf("%s:   %s parts=%llu bytes=%llu\n", c->cur->name,
			       tsync_meta_kind_name((unsigned int)k),
			       (unsigned long long)parts[k], (unsigned long long)bytes[k]);
	fflush(stdout);
	if (!bytes[TSYNC_META_HEADER_PAGE])
		return fail(c, "no HEADER_PAGE in the metadata");
	return 0;
}

/* expect_eof: the peer closes without sending anything more. */
static int cmd_expect_eof(struct client *c)
{
	char b[64];
	int ret = tsync_wait_readable(c->cur->fd, deadline(c));
	ssize_t n;

	if (ret <= 0)
		return fail(c, "no EOF: %s", ret ? strerror(-ret) : "timed out");
	n = read(c->cur->fd, b, sizeof(b));
	if (n > 0)
		return fail(c, "expected EOF, got %zd more bytes", n);
	if (n < 0 && errno != ECONNRESET)
		return fail(c, "expected EOF: %s", strerror(errno));
	printf("%s: EOF\n", c->cur->name);
	fflush(stdout);
	return 0;
}

/* Thread body of drain: reads until EOF, error or a long silence. */
static void *drain_thread(void *arg)
{
	struct conn *k = arg;
	const size_t cap = 65536;
	char *p = malloc(cap);

	if (!p) {
		k->drain_err = ENOMEM;
		return NULL;
	}
	for (;;) {
		struct pollfd pfd = { .fd = k->fd, .events = POLLIN };
		ssize_t n;
		int r = poll(&pfd, 1, 60000);

		if (r <= 0) {
			k->drain_err = r ? errno : ETIMEDOUT;
			break;
		}
		n = read(k->fd, p, cap);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			k->drain_err = errno;
			break;
		}
		k->drained += (uint64_t)n;
		if (k->drain_out >= 0 && tsync_write_full(k->drain_out, p, (size_t)n, -1)) {
			k->drain_err = EIO;
			break;
		}
	}
	free(p);
	return NULL;
}

/* drain [NAME [FILE]]. */
static int cmd_drain(struct client *c, int argc, char **argv)
{
	struct conn *k = argc > 1 ? find_conn(c, argv[1]) : c->cur;

	if (!k || k->draining)
		return fail(c, "drain: no such connection or already draining");
	k->drain_out = -1;
	if (argc > 2) {
		k->drain_out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (k->drain_out < 0)
			return fail(c, "%s: %s", argv[2], strerror(errno));
	}
	k->drained = 0;
	k->drain_err = 0;
	if (pthread_create(&k->drainer, NULL, drain_thread, k))
		return fail(c, "cannot start a thread");
	k->draining = true;
	return 0;
}

/* join [NAME]. */
static int cmd_join(struct client *c, int argc, char **argv)
{
	struct conn *k = argc > 1 ? find_conn(c, argv[1]) : c->cur;

	if (!k || !k->draining)
		return fail(c, "join: not draining");
	pthread_join(k->drainer, NULL);
	k->draining = false;
	if (k->drain_out >= 0)
		close(k->drain_out);
	printf("%s: drained %llu bytes\n", k->name, (unsigned long long)k->drained);
	fflush(stdout);
	if (k->drain_err)
		return fail(c, "drain %s: %s", k->name, strerror(k->drain_err));
	return 0;
}

/* connect [NAME]. */
static int cmd_connect(struct client *c, int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "c";
	struct tsync_peer peer;
	struct conn *k;
	int fd;

	if (find_conn(c, name) || c->nconns == MAX_CONNS)
		return fail(c, "connection %s exists (or too many)", name);
	fd = tsync_connect(&c->ep, c->timeout_ms, &peer, c->err, sizeof(c->err));
	if (fd < 0)
		return -1;
	k = &c->conns[c->nconns++];
	memset(k, 0, sizeof(*k));
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->fd = fd;
	c->cur = k;
	return 0;
}

/* Runs one command line split into @argc words. Returns 0 or -1. */
static int run_cmd(struct client *c, int argc, char **argv)
{
	const char *cmd = argv[0];
	struct tsync_msg m;

	if (!strcmp(cmd, "connect"))
		return cmd_connect(c, argc, argv);
	if (!strcmp(cmd, "echo")) {
		for (int i = 1; i < argc; i++)
			printf("%s%s", argv[i], i + 1 < argc ? " " : "\n");
		fflush(stdout);
		return 0;
	}
	if (!strcmp(cmd, "use") || !strcmp(cmd, "close")) {
		struct conn *k = argc > 1 ? find_conn(c, argv[1]) : c->cur;

		if (!k)
			return fail(c, "no such connection");
		if (cmd[0] == 'u') {
			c->cur = k;
		} else if (k->fd >= 0 && k->draining) {
			shutdown(k->fd, SHUT_RDWR);	/* its drainer sees EOF */
		} else if (k->fd >= 0) {
			close(k->fd);
			k->fd = -1;
		}
		return 0;
	}
	if (!strcmp(cmd, "join"))
		return cmd_join(c, argc, argv);
	if (!strcmp(cmd, "drain"))
		return cmd_drain(c, argc, argv);
	if (!c->nconns && cmd_connect(c, 1, (char *[]){ "connect" }))
		return -1;	/* the first command opens "c" by itself */
	if (!c->cur || c->cur->fd < 0)
		return fail(c, "no open connection");
	if (!strcmp(cmd, "hello"))
		return cmd_hello(c, argc, argv, true);
	if (!strcmp(cmd, "hello_nowait"))
		return cmd_hello(c, argc, argv, false);
	if (!strcmp(cmd, "session")) {
		char *expect[] = { "expect", "SESSION_REPLY" };

		tsync_msg_init(&m, TSYNC_MSG_SESSION_REQ);
		snprintf(m.session_req.name, sizeof(m.session_req.name), "%s",
			 argc > 1 ? argv[1] : "rawclient");
		m.session_req.trace_id = 0x7261770000000001ull;
		return send_msg(c, &m) ? -1 : cmd_expect(c, 2, expect);
	}
	if (!strcmp(cmd, "trace_start"))
		return cmd_trace_start(c, argc, argv);
	if (!strcmp(cmd, "trace_words"))
		return cmd_trace_words(c, argc, argv);
	if (!strcmp(cmd, "trace_stop") || !strcmp(cmd, "meta_req") ||
	    !strcmp(cmd, "bye")) {
		tsync_msg_init(&m, cmd[0] == 't' ? TSYNC_MSG_TRACE_STOP :
				   cmd[0] == 'm' ? TSYNC_MSG_META_REQ : TSYNC_MSG_BYE);
		return send_msg(c, &m);
	}
	if (!strcmp(cmd, "sync_result"))
		return cmd_sync_result(c, argc, argv);
	if (!strcmp(cmd, "raw"))
		return cmd_raw(c, argc, argv);
	if (!strcmp(cmd, "clock_req") && argc == 2) {
		char *expect[] = { "expect", "CLOCK_STATE" };

		tsync_msg_init(&m, TSYNC_MSG_CLOCK_REQ);
		snprintf(m.clock_req.clock, sizeof(m.clock_req.clock), "%s", argv[1]);
		return send_msg(c, &m) ? -1 : cmd_expect(c, 2, expect);
	}
	if (!strcmp(cmd, "expect"))
		return cmd_expect(c, argc, argv);
	if (!strcmp(cmd, "expect_meta"))
		return cmd_expect_meta(c);
	if (!strcmp(cmd, "expect_eof"))
		return cmd_expect_eof(c);
	return fail(c, "unknown command");
}

/* Splits @line into words (in place) and runs it. Empty lines and
 * comments succeed. Returns 0 or -1. */
static int run_line(struct client *c, char *line)
{
	char *argv[MAX_ARGS];
	int argc = 0;

	for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
		if (tok[0] == '#')
			break;
		if (argc == MAX_ARGS)
			return fail(c, "too many words");
		argv[argc++] = tok;
	}
	return argc ? run_cmd(c, argc, argv) : 0;
}

int main(int argc, char **argv)
{
	struct client *c = calloc(1, sizeof(*c));
	char line[8192], copy[8192];
	int opt, step = 0, ret = 0;

	if (!c)
		return 1;
	c->timeout_ms = 10000;
	signal(SIGPIPE, SIG_IGN);
	while ((opt = getopt(argc, argv, "t:q")) != -1) {
		if (opt == 't')
			c->timeout_ms = atoi(optarg);
		else if (opt == 'q')
			c->quiet = true;
		else
			goto usage;
	}
	if (optind >= argc || c->timeout_ms <= 0)
		goto usage;
	if (tsync_endpoint_parse(argv[optind], 0, &c->ep, c->err, sizeof(c->err))) {
		fprintf(stderr, "tsync_rawclient: %s\n", c->err);
		return 2;
	}
	for (int i = optind + 1; ; i++) {
		if (optind + 1 < argc) {
			if (i >= argc)
				break;
			snprintf(line, sizeof(line), "%s", argv[i]);
		} else if (!fgets(line, sizeof(line), stdin)) {
			break;
		}
		step++;
		snprintf(copy, sizeof(copy), "%s", line);
		copy[strcspn(copy, "\r\n")] = '\0';
		if (run_line(c, line)) {
			fprintf(stderr, "tsync_rawclient: step %d (%s): %s\n", step,
				copy, c->err);
			ret = 1;
			break;
		}
	}
	for (int i = 0; i < c->nconns; i++) {
		if (c->conns[i].draining) {
			if (c->conns[i].fd >= 0)
				shutdown(c->conns[i].fd, SHUT_RDWR);
			pthread_join(c->conns[i].drainer, NULL);
		}
		if (c->conns[i].fd >= 0)
			close(c->conns[i].fd);
	}
	free(c);
	return ret;
usage:
	fprintf(stderr, "usage: tsync_rawclient [-t MS] [-q] ENDPOINT [COMMAND]...\n");
	return 2;
}
