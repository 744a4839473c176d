// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tcmd_hostile: hostile peers of trace-cmd's agent protocol, for
 * tests/e2e/hostile_tcmd.sh (all on tcp:127.0.0.1).
 *
 *   tcmd_hostile hold PORT N SECS    N sessions brought to recording (TRACE_REQ,
 *                                    TRACE_RESP, time-sync port, metadata,
 *                                    CPU ports), then silent for SECS with
 *                                    every socket open; prints
 *                                    "recording K refused R"
 *   tcmd_hostile reset PORT SECS     for SECS: TRACE_REQ, TRACE_RESP, RST;
 *                                    prints "resets K"
 *   tcmd_hostile pending PORT STAGE SECS  one session brought to STAGE (resp:
 *                                    TRACE_RESP read; sync: the time-sync port
 *                                    connected too), prints "pending", stays
 *                                    silent SECS, then closes every socket
 *                                    (FIN) and prints "closed"
 *   tcmd_hostile slow-ptp DELAY_MS   a fake trace-cmd agent serving one host,
 *                                    one CPU, that sends each PTP probe
 *                                    DELAY_MS after the last echo; prints
 *                                    "listening on PORT" when ready
 *   tcmd_hostile slow-meta DELAY_MS  the same, whose sample is quick (offset
 *                                    0) but whose metadata then comes one
 *                                    byte every DELAY_MS, never ending
 *   tcmd_hostile req PORT WORD...    one TRACE_REQ with these argv words;
 *                                    prints "TRACE_RESP" or "refused"
 *                                    (exit 0 either way)
 *
 * The agent is dialled on 127.0.0.1, or on $TCMD_HOSTILE_ADDR.
 *
 * Exit status: 0, 1 on a failure (said on stderr), 2 usage.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "common/base/timeutil.h"
#include "common/wire/tcmd_io.h"
#include "proto/tcmd.h"

#define IO_MS 10000

static uint8_t out[TCMD_MSG_MAX];

/* Connects to 127.0.0.1:@port (or $TCMD_HOSTILE_ADDR's); fd or -1. */
static int dial(uint32_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	const char *addr = getenv("TCMD_HOSTILE_ADDR");
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (addr && inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
		close(fd);
		return -1;
	}

	if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Listens on 127.0.0.1:@port (0: any); fd or -1, the port in *@got. */
static int listen_on(uint32_t port, uint32_t *got)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 4) ||
	    getsockname(fd, (struct sockaddr *)&a, &l)) {
		close(fd);
		return -1;
	}
	*got = ntohs(a.sin_port);
	return fd;
}

/* Sends TRACE_REQ on @c and reads the answer into @m: 0 TRACE_RESP, 1
 * refused, -1 failed. */
static int request(struct tcmd_conn *c, struct tcmd_msg *m)
{
	static const char *const argv[] = { "-p", "nop" };
	static const char *const protos[] = { TCMD_PROTO_PTP, NULL };
	char err[256];

	if (tcmd_conn_send(c, out, tcmd_enc_trace_req(out, sizeof(out), 0, 1, 2, argv, protos),
			   err, sizeof(err)) ||
	    tcmd_conn_recv(c, m, err, sizeof(err))) {
		fprintf(stderr, "tcmd_hostile: %s\n", err);
		return -1;
	}
	return m->cmd == TCMD_TRACE_RESP ? 0 : 1;
}

/* One session to recording; its fds go to @fds (at most @max). Returns
 * 0, 1 refused, -1 failed. */
static int hold_one(uint32_t port, int *fds, int *nfds, int max)
{
	struct tcmd_conn *c = calloc(1, sizeof(*c));
	uint32_t cpus, *ports = NULL;
	struct tcmd_msg m;
	char err[256];
	int fd = dial(port), ret = -1;

	if (!c || fd < 0)
		goto out;
	fds[(*nfds)++] = fd;
	tcmd_conn_init(c, fd, "the agent", false, IO_MS);
	ret = request(c, &m);
	if (ret)
		goto out;
	ret = -1;
	cpus = m.resp.cpus;
	ports = calloc(cpus, sizeof(*ports));
	if (!ports || tcmd_resp_ports(&m.resp, ports, cpus) || *nfds + 1 + (int)cpus > max)
		goto out;
	fd = dial(m.resp.tsync_port);
	if (fd < 0)
		goto out;
	fds[(*nfds)++] = fd;
	do {	/* the metadata */
		if (tcmd_conn_recv(c, &m, err, sizeof(err))) {
			fprintf(stderr, "tcmd_hostile: metadata: %s\n", err);
			goto out;
		}
	} while (m.cmd == TCMD_SEND_DATA);
	for (uint32_t i = 0; i < cpus; i++) {
		fd = dial(ports[i]);
		if (fd < 0)
			goto out;
		fds[(*nfds)++] = fd;
	}
	ret = 0;
out:
	free(ports);
	free(c);
	return ret;
}

static int cmd_hold(uint32_t port, int n, int secs)
{
	int max = n * 300, nfds = 0, rec = 0, refused = 0;
	int *fds = calloc((size_t)max, sizeof(*fds));

	if (!fds)
		return 1;
	for (int i = 0; i < n; i++) {
		int ret = hold_one(port, fds, &nfds, max);

		if (ret < 0)
			return 1;
		rec += !ret;
		refused += ret == 1;
	}
	printf("recording %d refused %d\n", rec, refused);
	fflush(stdout);
	sleep((unsigned int)secs);
	return 0;
}

static int cmd_reset(uint32_t port, int secs)
{
	int64_t end = tsync_deadline_ms(secs * 1000);
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	struct tcmd_conn c;
	struct tcmd_msg m;
	int k = 0;

	while (tsync_now_ns() < end) {
		int fd = dial(port);

		if (fd < 0)
			return 1;
		tcmd_conn_init(&c, fd, "the agent", false, IO_MS);
		if (request(&c, &m) == 0)
			k++;
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(fd);	/* RST */
	}
	printf("resets %d\n", k);
	return 0;
}

static int cmd_pending(uint32_t port, const char *stage, int secs)
{
	struct tcmd_conn c;
	struct tcmd_msg m;
	int fd = dial(port), tfd = -1;

	if (fd < 0 || (strcmp(stage, "resp") && strcmp(stage, "sync")))
		return 1;
	tcmd_conn_init(&c, fd, "the agent", false, IO_MS);
	if (request(&c, &m))
		return 1;
	if (!strcmp(stage, "sync") && (tfd = dial(m.resp.tsync_port)) < 0)
		return 1;
	printf("pending\n");
	fflush(stdout);
	sleep((unsigned int)secs);
	if (tfd >= 0)
		close(tfd);
	close(fd);
	printf("closed\n");
	fflush(stdout);
	return 0;
}

/* Sleeps @ms. */
static void nap(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Ends the sample on @ts as the agent does: END, the host's PROBES, the
 * OFFSET (ts 1, offset 0). Returns 0 or -1. */
static int ptp_finish(struct tcmd_conn *ts)
{
	struct tcmd_msg m;
	char err[256];

	if (tcmd_conn_send(ts, out, tcmd_enc_ptp_end(out, sizeof(out)), err, sizeof(err)) ||
	    tcmd_conn_recv(ts, &m, err, sizeof(err)) ||
	    tcmd_conn_send(ts, out, tcmd_enc_ptp_offset(out, sizeof(out), 1, 0), err,
			   sizeof(err))) {
		fprintf(stderr, "tcmd_hostile: sample not ended: %s\n", err);
		return -1;
	}
	return 0;
}

/* Drips SEND_DATA of one byte every @delay_ms on @ctl until the host
 * leaves. Returns 0. */
static int drip_meta(struct tcmd_conn *ctl, int delay_ms)
{
	char err[256];
	uint32_t n = 0;

	fprintf(stderr, "tcmd_hostile: dripping metadata\n");
	while (!tcmd_conn_send(ctl, out, tcmd_enc_send_data(out, sizeof(out), "x", 1), err,
			       sizeof(err))) {
		n++;
		nap(delay_ms);
	}
	fprintf(stderr, "tcmd_hostile: the host left after %u bytes of metadata\n", n);
	return 0;
}

/* slow-ptp, slow-meta: see the top. */
static int cmd_slow(int delay_ms, bool slow_meta)
{
	struct tcmd_trace_resp r = { .cpus = 1, .page_size = 4096, .trace_id = 7,
				     .proto = TCMD_PROTO_PTP };
	uint32_t lport, tport, cport;
	int lfd = listen_on(0, &lport), tl = listen_on(0, &tport), cl = listen_on(0, &cport);
	struct tcmd_conn *ctl = calloc(1, sizeof(*ctl)), *ts = calloc(1, sizeof(*ts));
	struct tcmd_msg m;
	char err[256];
	int fd, ret = 1;

	if (lfd < 0 || tl < 0 || cl < 0 || !ctl || !ts)
		goto out;
	printf("listening on %u\n", lport);
	fflush(stdout);
	fd = accept(lfd, NULL, NULL);
	if (fd < 0)
		goto out;
	tcmd_conn_init(ctl, fd, "the host", false, IO_MS);
	if (tcmd_conn_recv(ctl, &m, err, sizeof(err)) || m.cmd != TCMD_TRACE_REQ) {
		fprintf(stderr, "tcmd_hostile: no TRACE_REQ\n");
		goto out;
	}
	r.tsync_port = tport;
	if (tcmd_conn_send(ctl, out, tcmd_enc_trace_resp(out, sizeof(out), &r, &cport), err,
			   sizeof(err)))
		goto out;
	fd = accept(tl, NULL, NULL);
	if (fd < 0)
		goto out;
	tcmd_conn_init(ts, fd, "the host", false, IO_MS);
	if (tcmd_conn_recv(ts, &m, err, sizeof(err)) || m.cmd != TCMD_TIME_SYNC) {
		fprintf(stderr, "tcmd_hostile: no PROBE\n");
		goto out;
	}
	fprintf(stderr, "tcmd_hostile: sample asked for\n");
	if (tcmd_conn_send(ts, out, tcmd_enc_ptp_start(out, sizeof(out), 5, TCMD_PTP_FL_FASTEST),
			   err, sizeof(err)) ||
	    tcmd_conn_recv(ts, &m, err, sizeof(err)))
		goto out;
	ret = 0;
	for (uint32_t n = 1; n <= TCMD_PTP_LOOP; n++) {
		if (tcmd_conn_send(ts, out, tcmd_enc_ptp_probe(out, sizeof(out), n), err,
				   sizeof(err)) ||
		    tcmd_conn_recv(ts, &m, err, sizeof(err))) {
			fprintf(stderr, "tcmd_hostile: the host left after %u probes\n", n);
			goto out;
		}
		if (!slow_meta)
			nap(delay_ms);
	}
	fprintf(stderr, "tcmd_hostile: all probes answered\n");
	if (slow_meta)
		ret = ptp_finish(ts) ? 1 : drip_meta(ctl, delay_ms);
out:
	/* the process ends here: its sockets close with it */
	free(ctl);
	free(ts);
	return ret;
}

/* req PORT WORD...: the agent's answer to one TRACE_REQ of @words. */
static int cmd_req(uint32_t port, int n, const char *const *words)
{
	static const char *const protos[] = { TCMD_PROTO_PTP, NULL };
	struct tcmd_conn c;
	struct tcmd_msg m;
	char err[256];
	int fd = dial(port);

	if (fd < 0)
		return 1;
	tcmd_conn_init(&c, fd, "the agent", false, IO_MS);
	if (tcmd_conn_send(&c, out, tcmd_enc_trace_req(out, sizeof(out), 0, 1, n,
							words, protos), err, sizeof(err)) ||
	    tcmd_conn_recv(&c, &m, err, sizeof(err))) {
		fprintf(stderr, "tcmd_hostile: %s\n", err);
		close(fd);
		return 1;
	}
	printf("%s\n", m.cmd == TCMD_TRACE_RESP ? "TRACE_RESP" : "refused");
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "req"))
		return cmd_req((uint32_t)atoi(argv[2]), argc - 3, (const char *const *)argv + 3);
	if (argc == 5 && !strcmp(argv[1], "hold"))
		return cmd_hold((uint32_t)atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
	if (argc == 4 && !strcmp(argv[1], "reset"))
		return cmd_reset((uint32_t)atoi(argv[2]), atoi(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "pending"))
		return cmd_pending((uint32_t)atoi(argv[2]), argv[3], atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "slow-ptp"))
		return cmd_slow(atoi(argv[2]), false);
	if (argc == 3 && !strcmp(argv[1], "slow-meta"))
		return cmd_slow(atoi(argv[2]), true);
	fprintf(stderr, "usage: tcmd_hostile hold PORT N SECS | reset PORT SECS | "
		"pending PORT resp|sync SECS | slow-ptp|slow-meta DELAY_MS | req PORT WORD...\n");
	return 2;
}
