// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What several benchmarks share; see bench_lib.h.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "tests/bench/bench_lib.h"

/* Starts the agent under timens_exec; see bench_lib.h. */
pid_t bench_start_agent(const char *b, long long shift_ns, char *ep, size_t eplen)
{
	char agent[256], helper[256], shift[32], line[256];
	int p[2];
	pid_t pid;
	FILE *f = NULL;

	snprintf(agent, sizeof(agent), "%s/tsync-agent", b);
	snprintf(helper, sizeof(helper), "%s/helpers/timens_exec", b);
	snprintf(shift, sizeof(shift), "%lld", shift_ns);
	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		execl(helper, helper, shift, "0", agent, "-l", "tcp:127.0.0.1:0",
		      "--allow", "127.0.0.1", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	if (pid > 0)
		f = fdopen(p[0], "r");
	if (!f || !fgets(line, sizeof(line), f) || strncmp(line, "listening on ", 13))
		goto fail;
	/* the agent writes nothing else to stdout: the pipe can go */
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	snprintf(ep, eplen, "%s", line + 13);
	return pid;
fail:
	if (f)
		fclose(f);
	else
		close(p[0]);
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	return -1;
}

/* Starts the agent and parses its endpoint; see bench_lib.h. */
pid_t bench_start_agent_ep(const char *b, long long shift_ns, struct tsync_endpoint *ep)
{
	char text[256], err[256];
	pid_t pid = bench_start_agent(b, shift_ns, text, sizeof(text));

	if (pid < 0)
		return -1;
	if (tsync_endpoint_parse(text, 0, ep, err, sizeof(err))) {
		fprintf(stderr, "agent endpoint %s: %s\n", text, err);
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}
