// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * tsync-agent: the guest side of tsync. Listens (vsock by default), serves
 * sync rounds and trace recording for the hosts that connect.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>

#include "agent/agent.h"
#include "common/log.h"
#include "proto/proto.h"

/* Prints usage to @f. */
static void usage(FILE *f)
{
	fprintf(f,
"usage: tsync-agent [-l ENDPOINT]... [-D] [--pidfile FILE] [-v]\n"
"  -l, --listen ENDPOINT   vsock:CID:PORT or tcp:HOST:PORT (repeatable);\n"
"                          default vsock:any:%d\n"
"  -D, --daemon            run in the background, log to syslog\n"
"      --pidfile FILE      write the agent's pid to FILE\n"
"      --allow ADDR[/PREFIX]  TCP peers that may connect (repeatable, IPv4 or\n"
"                          IPv6); required to listen on TCP\n"
"      --allow-cid LIST    vsock CIDs that may connect: N, N-M, any, comma-\n"
"                          separated (repeatable); default 2 (the host)\n"
"      --key-file FILE     hosts must prove they hold this shared key (HMAC-\n"
"                          SHA256 challenge-response); mode 0600 or stricter\n"
"      --max-sessions N    concurrent control sessions (default 16)\n"
"      --max-conns N       concurrent connections of any kind (default 256)\n"
"      --idle-timeout MS   close a connection silent this long (default 30000)\n"
"      --io-timeout MS     deadline for one message once started (default 5000)\n"
"      --auth-timeout MS   a connection must say HELLO (and pass AUTH with a\n"
"                          key) this soon after it opened (default 5000)\n"
"      --max-probes N      probes per sync round a host may ask (default 4096)\n"
"      --max-buffer-kb KB  per-CPU buffer a host may ask (default 65536)\n"
"      --max-trace-mb MB   trace buffers of all sessions together (default:\n"
"                          a quarter of the guest's memory)\n"
"      --max-message-kb KB largest message a host may send (4-1024,\n"
"                          default 1024)\n"
"  -v, --verbose           debug logging (every message sent and received)\n"
"  -h, --help              this text\n", TSYNC_DEFAULT_PORT);
}

/* Parses a positive int option or exits with a one-line error. */
static long parse_pos(const char *opt, const char *val, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(val, &end, 10);
	if (errno || *end || end == val || v <= 0 || v > max) {
		fprintf(stderr, "tsync-agent: invalid value '%s' for %s (1-%ld)\n", val, opt, max);
		exit(2);
	}
	return v;
}

/* Parses the command line into @cfg; exits on error. */
static void parse_args(int argc, char **argv, struct agent_cfg *cfg)
{
	enum { O_PIDFILE = 256, O_ALLOW, O_ALLOW_CID, O_KEYFILE, O_MAXSESS, O_MAXCONNS, O_IDLE, O_IO, O_AUTHTO, O_PROBES, O_BUFKB, O_TRACEMB, O_MSGKB };
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "daemon", no_argument, NULL, 'D' },
		{ "pidfile", required_argument, NULL, O_PIDFILE },
		{ "allow", required_argument, NULL, O_ALLOW },
		{ "allow-cid", required_argument, NULL, O_ALLOW_CID },
		{ "key-file", required_argument, NULL, O_KEYFILE },
		{ "max-sessions", required_argument, NULL, O_MAXSESS },
		{ "max-conns", required_argument, NULL, O_MAXCONNS },
		{ "idle-timeout", required_argument, NULL, O_IDLE },
		{ "io-timeout", required_argument, NULL, O_IO },
		{ "auth-timeout", required_argument, NULL, O_AUTHTO },
		{ "max-probes", required_argument, NULL, O_PROBES },
		{ "max-buffer-kb", required_argument, NULL, O_BUFKB },
		{ "max-trace-mb", required_argument, NULL, O_TRACEMB },
		{ "max-message-kb", required_argument, NULL, O_MSGKB },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	char err[300];
	int c;

	while ((c = getopt_long(argc, argv, "l:Dvh", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			if (cfg->nlisten >= AGENT_MAX_LISTEN) {
				fprintf(stderr, "tsync-agent: at most %d -l options\n", AGENT_MAX_LISTEN);
				exit(2);
			}
			if (tsync_endpoint_parse(optarg, TSYNC_EP_ALLOW_PORT0,
						 &cfg->listen[cfg->nlisten], err, sizeof(err))) {
				fprintf(stderr, "tsync-agent: -l: %s\n", err);
				exit(2);
			}
			cfg->nlisten++;
			break;
		case 'D': cfg->daemonize = true; break;
		case O_PIDFILE: cfg->pidfile = optarg; break;
		case O_ALLOW:
			if (tsync_acl_add_ip(cfg->acl, optarg, err, sizeof(err))) {
				fprintf(stderr, "tsync-agent: --allow: %s\n", err);
				exit(2);
			}
			break;
		case O_KEYFILE:
			tsync_key_free(cfg->key);
			cfg->key = NULL;
			if (tsync_key_load(optarg, &cfg->key, err, sizeof(err))) {
				fprintf(stderr, "tsync-agent: --key-file: %s\n", err);
				exit(2);
			}
			break;
		case O_ALLOW_CID:
			if (tsync_acl_add_cids(cfg->acl, optarg, err, sizeof(err))) {
				fprintf(stderr, "tsync-agent: --allow-cid: %s\n", err);
				exit(2);
			}
			break;
		case O_MAXSESS: cfg->max_sessions = (int)parse_pos("--max-sessions", optarg, 4096); break;
		case O_MAXCONNS: cfg->max_conns = (int)parse_pos("--max-conns", optarg, 65536); break;
		case O_IDLE: cfg->idle_timeout_ms = (int)parse_pos("--idle-timeout", optarg, 86400000); break;
		case O_IO: cfg->io_timeout_ms = (int)parse_pos("--io-timeout", optarg, 3600000); break;
		case O_AUTHTO: cfg->auth_timeout_ms = (int)parse_pos("--auth-timeout", optarg, 3600000); break;
		case O_PROBES: cfg->max_probes = (uint32_t)parse_pos("--max-probes", optarg, 4096); break;
		case O_BUFKB: cfg->max_buffer_kb = (uint32_t)parse_pos("--max-buffer-kb", optarg, 16 * 1024 * 1024); break;
		case O_TRACEMB: cfg->max_trace_mb = (uint32_t)parse_pos("--max-trace-mb", optarg, 16 * 1024 * 1024); break;
		case O_MSGKB:
			cfg->max_msg_kb = (uint32_t)parse_pos("--max-message-kb", optarg,
							      TSYNC_MSG_MAX / 1024);
			if (cfg->max_msg_kb < 4) {
				fprintf(stderr, "tsync-agent: --max-message-kb below 4\n");
				exit(2);
			}
			break;
		case 'v': cfg->verbose++; break;
		case 'h': usage(stdout); exit(0);
		default: usage(stderr); exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "tsync-agent: unexpected argument '%s'\n", argv[optind]);
		exit(2);
	}
	if (!cfg->nlisten) {
		cfg->listen[0] = (struct tsync_endpoint){ .kind = TSYNC_EP_VSOCK,
			.cid = (uint32_t)-1, .port = TSYNC_DEFAULT_PORT };
		cfg->nlisten = 1;
	}
	/* Whoever connects controls kernel tracing as root: vsock admits only
	 * the host unless told otherwise, TCP nobody unless told whom. */
	if (!tsync_acl_cid_rules(cfg->acl))
		tsync_acl_add_cids(cfg->acl, "2", NULL, 0);
	for (int i = 0; i < cfg->nlisten; i++) {
		if (cfg->listen[i].kind == TSYNC_EP_TCP && !tsync_acl_ip_rules(cfg->acl)) {
			fprintf(stderr, "tsync-agent: refusing to listen on TCP (%s) without "
				"--allow ADDR[/PREFIX]: anyone who can connect controls "
				"tracing\n", tsync_endpoint_format(&cfg->listen[i], err, sizeof(err)));
			exit(2);
		}
	}
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
	struct agent_cfg cfg = {
		.max_sessions = 16,
		.max_conns = 256,
		.idle_timeout_ms = 30000,
		.io_timeout_ms = 5000,
		.auth_timeout_ms = 5000,
		.max_probes = 4096,
		.max_buffer_kb = 65536,
		.max_msg_kb = TSYNC_MSG_MAX / 1024,
	};
	struct agent *a;
	sigset_t mask;
	char rules[512];
	int sigfd, ret;

	cfg.acl = tsync_acl_new();
	if (!cfg.acl) {
		fprintf(stderr, "tsync-agent: out of memory\n");
		return 1;
	}
	parse_args(argc, argv, &cfg);
	tsync_log_init("tsync-agent", cfg.verbose ? TSYNC_LOG_DEBUG : TSYNC_LOG_INFO,
		       cfg.daemonize);
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
