// SPDX-License-Identifier: GPL-2.0-or-later
/* -A arguments, trace-cmd's forms and tsync's; see agent_arg.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/base/errbuf.h"
#include "host/guest/agent_arg.h"
#include "host/guest/qemu.h"

#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."
#define DIGITS "0123456789"

/* True if @s is a non-empty run of digits. */
static bool is_digits(const char *s)
{
	return *s && strspn(s, DIGITS) == strlen(s);
}

/* Copies the guest name @s into @out->name; -EINVAL if it is not one. */
static int set_name(struct host_agent_arg *out, const char *s, char *err, size_t errlen)
{
	if (!*s || strlen(s) >= sizeof(out->name) || strspn(s, NAME_CHARS) != strlen(s)) {
		tsync_set_err(err, errlen, "invalid guest name '%s' (letters, digits, _ - .)", s);
		return -EINVAL;
	}
	snprintf(out->name, sizeof(out->name), "%s", s);
	return 0;
}

/* tsync's forms: ENDPOINT[@NAME] (NAME not a number). */
static int parse_tsync(const char *arg, int index, struct host_agent_arg *out,
		       char *err, size_t errlen)
{
	const char *at = strrchr(arg, '@');
	size_t eplen = at ? (size_t)(at - arg) : strlen(arg);
	char ep[256], why[256];

	if (eplen >= sizeof(ep)) {
		tsync_set_err(err, errlen, "agent address too long: %.40s...", arg);
		return -EINVAL;
	}
	memcpy(ep, arg, eplen);
	ep[eplen] = '\0';
	if (at) {
		if (set_name(out, at + 1, err, errlen))
			return -EINVAL;
	} else {
		snprintf(out->name, sizeof(out->name), "guest%d", index);
	}
	if (tsync_endpoint_parse(ep, TSYNC_EP_AGENT_SHORTHAND, &out->ep, why, sizeof(why))) {
		tsync_set_err(err, errlen, "%s", why);
		return -EINVAL;
	}
	/* CID@NAME: the shorthand's port is the dialect's (a trace-cmd
	 * agent's is 823) */
	if (is_digits(ep))
		out->ep.port = peer_dialect_port(out->dialect);
	return 0;
}

/* Parses the CID text @s (> 2: 0-2 are not guests). */
static int parse_cid(const char *s, unsigned int *cid, char *err, size_t errlen)
{
	unsigned long v = strtoul(s, NULL, 10);

	if (!is_digits(s) || strlen(s) > 10 || v <= 2 || v >= 0xffffffffUL) {
		tsync_set_err(err, errlen, "invalid CID '%s' (a number above 2)", s);
		return -EINVAL;
	}
	*cid = (unsigned int)v;
	return 0;
}

/* NAME (no @, not a number, no port): the local QEMU guest of that name. */
static int qemu_by_name(const char *proc, const char *name, struct host_agent_arg *out,
			char *err, size_t errlen)
{
	struct host_qemu_guest *g = malloc(sizeof(*g));
	int ret;

	if (!g)
		return tsync_set_err(err, errlen, "out of memory"), -EINVAL;
	ret = host_qemu_find(proc, name, 0, g);
	if (ret == -EEXIST)
		tsync_set_err(err, errlen, "two QEMU guests are named '%s': give NAME@CID", name);
	else if (ret)
		tsync_set_err(err, errlen, "no QEMU guest named '%s' runs here (-A NAME@CID, "
			      "CID, or HOST:PORT for a TCP agent)", name);
	else if (!g->cid)
		tsync_set_err(err, errlen, "QEMU guest '%s' (pid %d) has no vhost-vsock device "
			      "(guest-cid=): give -A HOST:PORT --name %s for a TCP agent",
			      name, (int)g->pid, name);
	else
		out->ep.cid = g->cid;
	ret = ret || !g->cid ? -EINVAL : 0;
	free(g);
	return ret;
}

/* True if a local QEMU guest (or several) is named @name. */
static bool qemu_exists(const char *proc, const char *name)
{
	struct host_qemu_guest *g = malloc(sizeof(*g));
	bool yes = g && host_qemu_find(proc, name, 0, g) != -ENOENT;

	free(g);
	return yes;
}

/* The name of the local QEMU guest with CID @cid, or @fallback. */
static void name_by_cid(const char *proc, unsigned int cid, const char *fallback,
			struct host_agent_arg *out)
{
	struct host_qemu_guest *g = malloc(sizeof(*g));

	if (g && !host_qemu_find(proc, NULL, cid, g) && g->name[0] &&
	    strspn(g->name, NAME_CHARS) == strlen(g->name))
		snprintf(out->name, sizeof(out->name), "%s", g->name);
	else
		snprintf(out->name, sizeof(out->name), "%s", fallback);
	free(g);
}

/* trace-cmd's forms, @s writable: NAME@CID[:PORT], CID[:PORT], NAME[:PORT],
 * HOST:PORT (see agent_arg.h); the port defaults to the dialect's. */
static int parse_tracecmd(const char *proc, char *s, struct host_agent_arg *out,
			  char *err, size_t errlen)
{
	char *colon = strrchr(s, ':'), *at;
	unsigned long port = peer_dialect_port(out->dialect);

	if (colon) {
		*colon = '\0';
		port = strtoul(colon + 1, NULL, 10);
		if (!is_digits(colon + 1) || strlen(colon + 1) > 5 || !port || port > 65535) {
			tsync_set_err(err, errlen, "invalid port '%s'", colon + 1);
			return -EINVAL;
		}
	}
	out->ep.port = (uint16_t)port;
	out->ep.kind = TSYNC_EP_VSOCK;
	at = strrchr(s, '@');
	if (at) {		/* NAME@CID */
		*at = '\0';
		if (set_name(out, s, err, errlen))
			return -EINVAL;
		return parse_cid(at + 1, &out->ep.cid, err, errlen);
	}
	if (is_digits(s)) {	/* CID */
		if (parse_cid(s, &out->ep.cid, err, errlen))
			return -EINVAL;
		name_by_cid(proc, out->ep.cid, s, out);
		return 0;
	}
	if (set_name(out, s, err, errlen))
		return -EINVAL;
	/* a QEMU guest's name; with a port and no such guest, a TCP host */
	if (!strchr(s, '.') && (!colon || qemu_exists(proc, s)))
		return qemu_by_name(proc, s, out, err, errlen);
	if (!colon) {
		tsync_set_err(err, errlen, "'%s': a TCP agent needs a port (HOST:PORT)", s);
		return -EINVAL;
	}
	out->ep.kind = TSYNC_EP_TCP;
	snprintf(out->ep.host, sizeof(out->ep.host), "%s", s);
	return 0;
}

int host_agent_arg_parse_in(const char *proc_root, const char *arg, int index,
			    struct host_agent_arg *out, char *err, size_t errlen)
{
	const char *at;
	char buf[256];

	memset(out, 0, sizeof(*out));
	/* tcmd:AGENT: a stock trace-cmd agent, AGENT in any form below */
	out->dialect = peer_dialect(arg, &arg);
	at = strrchr(arg, '@');
	if (strlen(arg) >= sizeof(buf)) {
		tsync_set_err(err, errlen, "agent address too long: %.40s...", arg);
		return -EINVAL;
	}
	if (!*arg) {
		tsync_set_err(err, errlen, "empty agent address");
		return -EINVAL;
	}
	/* tsync's forms: a scheme, a bracketed IPv6 address, or @NAME that is
	 * no CID (trace-cmd's NAME@CID has a number after the @) */
	/* ... and two colons are no trace-cmd form either ("udp:H:P", an
	 * IPv6 address without brackets): the endpoint parser says why */
	if (tsync_endpoint_has_scheme(arg) || arg[0] == '[' ||
	    (at && !is_digits(at + 1) && !strchr(at + 1, ':')) ||
	    strchr(arg, ':') != strrchr(arg, ':'))
		return parse_tsync(arg, index, out, err, errlen);
	snprintf(buf, sizeof(buf), "%s", arg);
	return parse_tracecmd(proc_root, buf, out, err, errlen);
}

int host_agent_arg_parse(const char *arg, int index, struct host_agent_arg *out,
			 char *err, size_t errlen)
{
	return host_agent_arg_parse_in(NULL, arg, index, out, err, errlen);
}

/* --vm's PID; see agent_arg.h. */
int host_agent_vm(const char *proc_root, const char *vm, pid_t *pid, char *err, size_t errlen)
{
	struct host_qemu_guest *g;
	char path[64];
	int ret;

	if (is_digits(vm)) {
		unsigned long v = strtoul(vm, NULL, 10);

		if (strlen(vm) > 9 || !v)
			return tsync_set_err(err, errlen, "--vm %s: not a PID", vm), -EINVAL;
		snprintf(path, sizeof(path), "%s/%lu", proc_root ? proc_root : "/proc", v);
		if (access(path, F_OK))
			return tsync_set_err(err, errlen, "--vm %s: no such process", vm), -EINVAL;
		*pid = (pid_t)v;
		return 0;
	}
	g = malloc(sizeof(*g));
	if (!g)
		return tsync_set_err(err, errlen, "out of memory"), -EINVAL;
	ret = host_qemu_find(proc_root, vm, 0, g);
	if (ret == -EEXIST)
		tsync_set_err(err, errlen, "--vm %s: two QEMU guests have that name: give its PID",
			      vm);
	else if (ret)
		tsync_set_err(err, errlen, "--vm %s: no QEMU guest of that -name runs here "
			      "(a PID, or a guest's -name)", vm);
	else
		*pid = g->pid;
	free(g);
	return ret ? -EINVAL : 0;
}

/* Fills a sync target; see agent_arg.h. */
void host_agent_target(struct sync_target *t, const char *proc_root, struct peer *p,
		       const struct tsync_endpoint *ep, const char *name, pid_t vm_pid)
{
	*t = (struct sync_target){ .peer = p, .ep = ep, .name = name, .vm_pid = vm_pid,
				   .nvcpu = p ? (int)peer_ncpus(p) : 0 };
	if (!vm_pid && ep->kind == TSYNC_EP_VSOCK && ep->cid) {
		struct host_qemu_guest *g = malloc(sizeof(*g));

		if (g && !host_qemu_find(proc_root, NULL, ep->cid, g))
			t->vm_pid = g->pid;
		free(g);
	}
}

/* Adds one agent to a command line's list; see agent_arg.h. */
int host_agent_list_add(struct host_agent_arg *agents, int *n, const char *arg,
			const char *what, char *err, size_t errlen)
{
	struct host_agent_arg *a = &agents[*n];

	if (*n >= HOST_MAX_AGENTS)
		return snprintf(err, errlen, "more than %d %s", HOST_MAX_AGENTS, what), -1;
	if (host_agent_arg_parse(arg, *n, a, err, errlen))
		return -1;
	for (int i = 0; i < *n; i++)
		if (!strcmp(agents[i].name, a->name))
			return snprintf(err, errlen, "two agents named '%s'", a->name), -1;
	(*n)++;
	return 0;
}

/* Resolves --vm for the last agent of a list; see agent_arg.h. */
int host_agent_list_vm(struct host_agent_arg *agents, int n, const char *vm, char *err,
		       size_t errlen)
{
	if (!n)
		return snprintf(err, errlen, "--vm follows the -A it is for"), -1;
	return host_agent_vm(NULL, vm, &agents[n - 1].vm_pid, err, errlen) ? -1 : 0;
}
