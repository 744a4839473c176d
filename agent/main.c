// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tsync-agent: the guest side of tsync. Listens (vsock by default, or on
 * the sockets systemd passes: agent/listenfds.h), serves sync rounds and
 * trace recording for the hosts that connect.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netdb.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/signalfd.h>
#include <sys/stat.h>

#include "agent/agent.h"
#include "common/clock/clock.h"
#include "agent/listenfds.h"
#include "common/base/log.h"
#include "common/cli/opt.h"
#include "common/cli/recopt.h"
#include "common/base/version.h"
#include "common/net/transport.h"
#include "proto/tcmd.h"
#include "proto/proto.h"

#define STR_(x) #x
#define STR(x) STR_(x)

enum { O_LISTEN = 1, O_TCMD_LISTEN, O_TCMD_CLIENT, O_TCMD_PORT, O_PROXY, O_DAEMON, O_PIDFILE,
       O_ALLOW, O_ALLOW_CID, O_KEYFILE, O_MAXSESS, O_MAXCONNS, O_IDLE, O_IO, O_AUTHTO,
       O_PROBES, O_BUFKB, O_TRACEMB, O_MSGKB, O_CLOCKD, O_PTP4L, O_CHRONY, O_CLOCKTO,
       O_BORROW_TOP, O_VERBOSE, O_VERSION, O_HELP };

/* The defaults of the two limits below are their maximum, the protocol's. */
_Static_assert(TSYNC_MAX_PROBES == 4096, "--max-probes default");
_Static_assert(TSYNC_MSG_MAX / 1024 == 1024, "--max-message-kb default");

/* The agent's options; tsync-agent(8) documents each (tests/e2e/manpages.sh
 * checks the defaults agree). */
static const struct tsync_opt agent_opts[] = {
	{ .id = O_LISTEN, .name = "listen", .short_name = 'l', .type = TSYNC_OPT_STRING,
	  .flags = TSYNC_OPT_REPEAT, .arg = "ENDPOINT",
	  .def = "vsock:any:" STR(TSYNC_DEFAULT_PORT),
	  .help = "vsock:CID:PORT or tcp:HOST:PORT, up to " STR(AGENT_MAX_LISTEN) },
	{ .id = O_TCMD_LISTEN, .name = "tcmd-listen", .type = TSYNC_OPT_STRING,
	  .flags = TSYNC_OPT_REPEAT, .arg = "ENDPOINT|none",
	  .def_text = "vsock:any:823 when listening on vsock",
	  .help = "one more endpoint, for trace-cmd hosts (every endpoint serves both "
		  "protocols); none: no extra one" },
	{ .id = O_TCMD_CLIENT, .name = "tcmd-client", .short_name = 'N',
	  .type = TSYNC_OPT_STRING, .arg = "HOST", .def_text = "none",
	  .help = "trace-cmd agent's -N: listen on TCP (port -p) instead of vsock, for "
		  "HOST only (its addresses join --allow)" },
	{ .id = O_TCMD_PORT, .name = "tcmd-port", .short_name = 'p', .type = TSYNC_OPT_INT,
	  .arg = "PORT", .def = "823", .min = 1, .max = 4294967294.0,
	  .help = "trace-cmd agent's -p: the port for trace-cmd hosts, on vsock (or TCP "
		  "with -N)" },
	{ .id = O_PROXY, .short_name = 'P', .type = TSYNC_OPT_STRING,
	  .flags = TSYNC_OPT_UNSUPPORTED,
	  .help = "trace-cmd's proxy mode is not part of tsync-agent" },
	{ .id = O_DAEMON, .name = "daemon", .short_name = 'D', .type = TSYNC_OPT_FLAG,
	  .help = "run in the background, log to syslog" },
	{ .id = O_PIDFILE, .name = "pidfile", .type = TSYNC_OPT_STRING, .arg = "FILE",
	  .def_text = "no pid file", .help = "write the agent's pid to FILE" },
	{ .id = O_ALLOW, .name = "allow", .type = TSYNC_OPT_STRING, .flags = TSYNC_OPT_REPEAT,
	  .arg = "ADDR[/PREFIX]", .def_text = "none",
	  .help = "TCP peers that may connect (IPv4 or IPv6); required to listen on TCP" },
	{ .id = O_ALLOW_CID, .name = "allow-cid", .type = TSYNC_OPT_STRING,
	  .flags = TSYNC_OPT_REPEAT, .arg = "LIST", .def = "2",
	  .help = "vsock CIDs that may connect: N, N-M, any, comma-separated" },
	{ .id = O_KEYFILE, .name = "key-file", .type = TSYNC_OPT_STRING, .arg = "FILE",
	  .def_text = "no key", .help = "hosts must prove they hold this shared key (HMAC-SHA256 "
		  "challenge-response); mode 0600 or stricter" },
	{ .id = O_MAXSESS, .name = "max-sessions", .type = TSYNC_OPT_INT, .arg = "N",
	  .def = "16", .min = 1, .max = 4096, .help = "concurrent control sessions" },
	{ .id = O_MAXCONNS, .name = "max-conns", .type = TSYNC_OPT_INT, .arg = "N",
	  .def = "256", .min = 1, .max = 65536,
	  .help = "concurrent connections of any kind" },
	{ .id = O_IDLE, .name = "idle-timeout", .type = TSYNC_OPT_INT, .arg = "MS",
	  .def = "30000", .min = 1, .max = 86400000,
	  .help = "close a connection silent this long" },
	{ .id = O_IO, .name = "io-timeout", .type = TSYNC_OPT_INT, .arg = "MS",
	  .def = "5000", .min = 1, .max = 3600000,
	  .help = "deadline for one message once started" },
	{ .id = O_AUTHTO, .name = "auth-timeout", .type = TSYNC_OPT_INT, .arg = "MS",
	  .def = "5000", .min = 1, .max = 3600000,
	  .help = "a connection must say HELLO (and pass AUTH with a key) this soon "
		  "after it opened" },
	{ .id = O_PROBES, .name = "max-probes", .type = TSYNC_OPT_INT, .arg = "N",
	  .def = "4096", .min = 1, .max = TSYNC_MAX_PROBES,
	  .help = "probes per sync round a host may ask" },
	{ .id = O_BUFKB, .name = "max-buffer-kb", .type = TSYNC_OPT_INT, .arg = "KB",
	  .def = "65536", .min = 1, .max = 16 * 1024 * 1024,
	  .help = "per-CPU buffer a host may ask" },
	{ .id = O_TRACEMB, .name = "max-trace-mb", .type = TSYNC_OPT_INT, .arg = "MB",
	  .min = 1, .max = 16 * 1024 * 1024, .def_text = "a quarter of the guest's memory",
	  .help = "trace buffers of all sessions together" },
	{ .id = O_MSGKB, .name = "max-message-kb", .type = TSYNC_OPT_INT, .arg = "KB",
	  .def = "1024", .min = 4, .max = TSYNC_MSG_MAX / 1024.0,
	  .help = "largest message a host may send" },
	{ .id = O_CLOCKD, .name = "clock-daemon", .type = TSYNC_OPT_CHOICE, .arg = "DAEMON",
	  .def = "auto", .choices = agent_clock_daemons,
	  .help = "the time daemon whose state CLOCK_REQ reports: auto, ptp4l, chrony, none" },
	{ .id = O_PTP4L, .name = "ptp4l-socket", .type = TSYNC_OPT_STRING, .arg = "PATH",
	  .def = CLOCK_DEF_PTP4L_SOCKET, .help = "ptp4l's management socket (its uds_address)" },
	{ .id = O_CHRONY, .name = "chrony-socket", .type = TSYNC_OPT_STRING, .arg = "PATH",
	  .def = CLOCK_DEF_CHRONY_SOCKET,
	  .help = "chronyd's command socket (chronyc -h), or a host address" },
	{ .id = O_CLOCKTO, .name = "clock-timeout", .type = TSYNC_OPT_INT, .arg = "MS",
	  .def = STR(CLOCK_DEF_TIMEOUT_MS), .min = 1, .max = 60000,
	  .help = "deadline of one read of the time daemon" },
	{ .id = O_BORROW_TOP, .name = "borrow-top-in-use", .type = TSYNC_OPT_FLAG,
	  .help = "let a recording borrow a top tracefs instance someone uses (its buffer "
		  "is lost)" },
	{ .id = O_VERBOSE, .name = "verbose", .short_name = 'v', .type = TSYNC_OPT_STRING,
	  .flags = TSYNC_OPT_OPTIONAL | TSYNC_OPT_REPEAT, .arg = "LEVEL",
	  .help = "debug logging (every message sent and received); LEVEL: trace-cmd's "
		  "(none, crit, err, warn, info, debug, all or 0-6)" },
	{ .id = O_VERSION, .name = "version", .type = TSYNC_OPT_FLAG,
	  .help = "print the version and exit" },
	{ .id = O_HELP, .name = "help", .short_name = 'h', .type = TSYNC_OPT_HELP,
	  .help = "this text" },
	{ 0 }
};

static const struct tsync_opt_cmd agent_cmd = {
	.prog = "tsync-agent",
	.synopsis = "usage: tsync-agent [-l ENDPOINT]... [-D] [--pidfile FILE] [-v] [OPTIONS]\n"
		    "       tsync-agent [-N HOST] [-p PORT] [-D] [--verbose[=LEVEL]] "
		    "(trace-cmd agent's)\n",
	.opts = agent_opts,
};

/* Appends endpoint @str to the agent's listeners (-l and --tcmd-listen).
 * Returns 0, or -1 with the reason in @err. */
static int add_listen(struct agent_cfg *cfg, const char *str, char *err, size_t errlen)
{
	if (cfg->nlisten >= AGENT_MAX_LISTEN)
		return snprintf(err, errlen, "at most %d endpoints", AGENT_MAX_LISTEN), -1;
	if (tsync_endpoint_parse(str, TSYNC_EP_ALLOW_PORT0 | TSYNC_EP_LISTEN,
				 &cfg->listen[cfg->nlisten], err, errlen))
		return -1;
	cfg->nlisten++;
	return 0;
}

/* Stores one option value into the struct agent_cfg @ctx (tsync_opt_fn). */
static int set_opt(void *ctx, const struct tsync_opt *o, const struct tsync_opt_val *v,
		   char *err, size_t errlen)
{
	struct agent_cfg *cfg = ctx;

	switch (o->id) {
	case O_LISTEN:
		/* trace-cmd's -N: TCP instead of the default vsock; sockets
		 * from systemd instead of any default */
		if (v->is_default && (cfg->tcmd_client || cfg->listen_fds))
			return 0;
		return add_listen(cfg, v->str, err, errlen);
	case O_TCMD_CLIENT: cfg->tcmd_client = v->str; return 0;
	case O_TCMD_PORT:
		cfg->tcmd_port = (uint32_t)v->num;
		cfg->tcmd_port_set = !v->is_default;
		return 0;
	case O_TCMD_LISTEN:
		cfg->tcmd_listen_set = true;
		return strcmp(v->str, "none") ? add_listen(cfg, v->str, err, errlen) : 0;
	case O_DAEMON: cfg->daemonize = true; return 0;
	case O_PIDFILE: cfg->pidfile = v->str; return 0;
	case O_ALLOW: return tsync_acl_add_ip(cfg->acl, v->str, err, errlen) ? -1 : 0;
	case O_ALLOW_CID: return tsync_acl_add_cids(cfg->acl, v->str, err, errlen) ? -1 : 0;
	case O_KEYFILE: return tsync_key_load(v->str, &cfg->key, err, errlen) ? -1 : 0;
	case O_MAXSESS: cfg->max_sessions = (int)v->num; return 0;
	case O_MAXCONNS: cfg->max_conns = (int)v->num; return 0;
	case O_IDLE: cfg->idle_timeout_ms = (int)v->num; return 0;
	case O_IO: cfg->io_timeout_ms = (int)v->num; return 0;
	case O_AUTHTO: cfg->auth_timeout_ms = (int)v->num; return 0;
	case O_PROBES: cfg->max_probes = (uint32_t)v->num; return 0;
	case O_BUFKB: cfg->max_buffer_kb = (uint32_t)v->num; return 0;
	case O_TRACEMB: cfg->max_trace_mb = (uint32_t)v->num; return 0;	/* 0: RAM / 4 */
	case O_MSGKB: cfg->max_msg_kb = (uint32_t)v->num; return 0;
	case O_CLOCKD: cfg->clock_daemon = agent_clock_daemons[v->num]; return 0;
	case O_PTP4L: cfg->ptp4l_socket = v->str; return 0;
	case O_CHRONY: cfg->chrony_socket = v->str; return 0;
	case O_CLOCKTO: cfg->clock_timeout_ms = (int)v->num; return 0;
	case O_BORROW_TOP: cfg->borrow_top_in_use = true; return 0;
	case O_VERBOSE:
		/* alone: tsync's debug; a LEVEL: trace-cmd's meaning */
		cfg->log_level = v->str ? tsync_recopt_verbose_level(v->str) : TSYNC_RECOPT_LOG_DEBUG;
		if (cfg->log_level < 0)
			return snprintf(err, errlen, "%s", TSYNC_RECOPT_VERBOSE_EXPECTED), -1;
		cfg->log_level = tsync_recopt_log_level(cfg->log_level);
		return 0;
	case O_VERSION:
		printf("tsync-agent %s\n", TSYNC_VERSION);
		exit(0);
	}
	return snprintf(err, errlen, "not handled"), -1;
}

_Static_assert(TCMD_VSOCK_PORT == 823, "--tcmd-listen and -p default");

/* Without --tcmd-listen, an agent on vsock also listens on trace-cmd's
 * agent port (-p, default 823), where `trace-cmd record -A CID` looks for
 * it. Returns true if it does. */
static bool add_tcmd_default(struct agent_cfg *cfg)
{
	int n = cfg->nlisten;

	/* (sockets from systemd: the .socket unit names trace-cmd's port) */
	if (cfg->tcmd_listen_set || cfg->listen_fds || n >= AGENT_MAX_LISTEN)
		return false;
	for (int i = 0; i < n; i++) {
		if (cfg->listen[i].kind != TSYNC_EP_VSOCK)
			continue;
		if (cfg->listen[i].port == cfg->tcmd_port)
			return true;
		cfg->listen[n] = cfg->listen[i];
		cfg->listen[n].port = cfg->tcmd_port;
		cfg->nlisten++;
		return true;
	}
	return false;
}

/*
 * trace-cmd agent's -N HOST: listens on TCP port -p of every address, and
 * lets HOST's addresses in (trace-cmd's agent admits that host alone too;
 * every other limit of the agent still applies). Returns 0, or -1 with
 * @err set.
 */
static int add_tcmd_client(struct agent_cfg *cfg, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	char addr[INET6_ADDRSTRLEN], ep[64];
	bool v4 = false;
	int ret;

	if (cfg->tcmd_port > 65535)
		return snprintf(err, errlen, "-p %u: a TCP port (-N) is 1-65535",
				cfg->tcmd_port), -1;
	ret = getaddrinfo(cfg->tcmd_client, NULL, &hints, &res);
	if (ret)
		return snprintf(err, errlen, "-N %s: %s", cfg->tcmd_client,
				gai_strerror(ret)), -1;
	for (ai = res, ret = 0; ai && !ret; ai = ai->ai_next) {
		ret = getnameinfo(ai->ai_addr, ai->ai_addrlen, addr, sizeof(addr), NULL, 0,
				  NI_NUMERICHOST);
		if (ret) {
			snprintf(err, errlen, "-N %s: %s", cfg->tcmd_client, gai_strerror(ret));
			break;
		}
		v4 |= ai->ai_family == AF_INET;
		ret = tsync_acl_add_ip(cfg->acl, addr, err, errlen);
	}
	freeaddrinfo(res);
	if (ret)
		return -1;
	/* both families: 0.0.0.0 (an IPv6 listener would clash on the port) */
	snprintf(ep, sizeof(ep), "tcp:%s:%u", v4 ? "0.0.0.0" : "[::]", cfg->tcmd_port);
	return add_listen(cfg, ep, err, errlen);
}

/* What to change in the .socket unit for an fd tsync_listener_adopt()
 * refused with @ret. */
static const char *activation_fix(int ret)
{
	switch (ret) {
	case -ESOCKTNOSUPPORT:
		return ": the .socket unit needs ListenStream=, not ListenDatagram=";
	case -EINVAL:
		return ": the .socket unit needs Accept=no";
	case -EAFNOSUPPORT:
		return ": ListenStream= takes vsock::PORT or ADDRESS:PORT";
	case -EBADF:
	case -ENOTSOCK:
		return ": LISTEN_FDS counts the sockets passed from fd 3 on";
	}
	return "";
}

/*
 * Takes over the sockets systemd passed, described by @lfds, as listeners
 * of @cfg: each is checked (a listening stream socket, vsock or TCP).
 * Exits 2 with one line for a wrong one: a service started with the wrong
 * sockets must say so, not wait on them.
 */
static void adopt_listen_fds(struct agent_cfg *cfg, const struct agent_listen_fds *lfds)
{
	char err[300];
	int ret;

	if (cfg->nlisten + lfds->n > AGENT_MAX_LISTEN) {
		fprintf(stderr, "tsync-agent: at most %d endpoints, the %d socket(s) from "
			"systemd included\n", AGENT_MAX_LISTEN, lfds->n);
		exit(2);
	}
	for (int i = 0; i < lfds->n; i++) {
		ret = tsync_listener_adopt(AGENT_LISTEN_FDS_START + i, &cfg->inherited[i], err,
					   sizeof(err));
		if (ret) {
			fprintf(stderr, "tsync-agent: socket activation: %s%s\n", err,
				activation_fix(ret));
			exit(2);
		}
		cfg->inherited_name[i] = lfds->names[i];
		cfg->ninherited++;
	}
}

/* Parses the command line into @cfg; exits on error. */
static void parse_args(int argc, char **argv, struct agent_cfg *cfg)
{
	char err[300];
	int first = tsync_opt_parse_or_exit(&agent_cmd, argc, argv, set_opt, cfg);

	if (first < argc) {
		fprintf(stderr, "tsync-agent: unexpected argument '%s'\n", argv[first]);
		exit(2);
	}
	if (cfg->tcmd_client && add_tcmd_client(cfg, err, sizeof(err))) {
		fprintf(stderr, "tsync-agent: %s\n", err);
		exit(2);
	}
	if (!cfg->tcmd_client && !add_tcmd_default(cfg) && cfg->tcmd_port_set) {
		fprintf(stderr, "tsync-agent: -p %u has no endpoint to apply to: it is the "
			"port for trace-cmd hosts on vsock (a vsock -l), or on TCP with -N "
			"HOST%s\n", cfg->tcmd_port,
			cfg->tcmd_listen_set ? "; --tcmd-listen names that endpoint whole" : "");
		exit(2);
	}
}

/* Whoever connects controls kernel tracing as root: vsock admits only the
 * host unless told otherwise (--allow-cid's default), TCP nobody unless
 * told whom; sockets from systemd alike. Exits 2 if TCP has no --allow. */
static void check_tcp_allowed(const struct agent_cfg *cfg)
{
	const char *what = NULL, *from = "";
	char ep[300];

	if (tsync_acl_ip_rules(cfg->acl))
		return;
	for (int i = 0; i < cfg->nlisten && !what; i++)
		if (cfg->listen[i].kind == TSYNC_EP_TCP)
			what = tsync_endpoint_format(&cfg->listen[i], ep, sizeof(ep));
	for (int i = 0; i < cfg->ninherited && !what; i++) {
		if (tsync_listener_kind(cfg->inherited[i]) == TSYNC_EP_TCP) {
			what = tsync_listener_name(cfg->inherited[i]);
			from = ", a socket from systemd";
		}
	}
	if (!what)
		return;
	fprintf(stderr, "tsync-agent: refusing to listen on TCP (%s%s) without "
		"--allow ADDR[/PREFIX]: anyone who can connect controls tracing\n", what, from);
	exit(2);
}

/* Writes our pid to @path; returns 0 or -errno. */
static int write_pidfile(const char *path)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	fprintf(f, "%d\n", getpid());
	if (fclose(f))
		return -errno;
	return 0;
}

int main(int argc, char **argv)
{
	struct agent_cfg cfg = { .log_level = TSYNC_LOG_INFO };	/* the rest: agent_opts[] */
	struct agent_listen_fds lfds;
	struct agent *a;
	sigset_t mask;
	char rules[512], lerr[300];
	int sigfd, ret, lret;

	cfg.acl = tsync_acl_new();
	if (!cfg.acl) {
		fprintf(stderr, "tsync-agent: out of memory\n");
		return 1;
	}
	/* Socket activation: read, then unset, as sd_listen_fds(3) does with
	 * unset_environment, so that no child takes the sockets for its own. */
	lret = agent_listen_fds_parse(getenv("LISTEN_PID"), getenv("LISTEN_FDS"),
				      getenv("LISTEN_FDNAMES"), getpid(), &lfds, lerr, sizeof(lerr));
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	cfg.listen_fds = lfds.n;
	parse_args(argc, argv, &cfg);
	if (lret) {
		fprintf(stderr, "tsync-agent: %s\n", lerr);
		tsync_acl_free(cfg.acl);
		tsync_key_free(cfg.key);
		return 2;
	}
	adopt_listen_fds(&cfg, &lfds);
	check_tcp_allowed(&cfg);
	tsync_log_init("tsync-agent", cfg.log_level, cfg.daemonize);
	signal(SIGPIPE, SIG_IGN);

	/* SIGTERM/SIGINT arrive through a signalfd polled by the accept loop,
	 * blocked in every thread, so shutdown runs in normal context. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);

	sigfd = -1;
	ret = -1;
	if (cfg.daemonize && daemon(0, 0)) {
		log_err("daemon: %s", strerror(errno));
		goto out;
	}
	sigfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sigfd < 0) {
		log_err("signalfd: %s", strerror(errno));
		goto out;
	}
	log_info("allowed peers: %s; authentication: %s",
		 tsync_acl_format(cfg.acl, rules, sizeof(rules)),
		 cfg.key ? "shared key required" : "none (no --key-file)");
	ret = agent_create(&cfg, &a);
	if (ret)
		goto out;
	if (cfg.pidfile && (ret = write_pidfile(cfg.pidfile))) {
		log_err("cannot write pid file %s: %s", cfg.pidfile, strerror(-ret));
		agent_destroy(a);
		goto out;
	}
	if (!cfg.daemonize) {
		agent_announce(a, STDOUT_FILENO);
	}
	ret = agent_run(a, sigfd);
	agent_destroy(a);
	if (cfg.pidfile)
		unlink(cfg.pidfile);
out:
	if (sigfd >= 0)
		close(sigfd);
	/* Only the accept loop reads the allow list, and it has returned. */
	tsync_acl_free(cfg.acl);
	tsync_key_free(cfg.key);
	return ret ? 1 : 0;
}
