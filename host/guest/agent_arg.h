/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The -A arguments of `tsync-host record` and `tsync-host sync`: where an
 * agent listens, and the name its results and files carry.
 *
 * trace-cmd's forms (tracecmd/trace-record.c parse_guest_name()):
 *   NAME@CID[:PORT]   vsock CID, named NAME
 *   CID[:PORT]        vsock CID, named after the local QEMU guest with
 *                     that CID, else the CID
 *   NAME[:PORT]       the local QEMU guest started with -name NAME (its
 *                     vhost-vsock guest-cid=); with a PORT and no such
 *                     guest, the TCP host NAME
 *   HOST:PORT         TCP (an address, or a name with a '.'), named HOST
 * tsync's own forms stay: tcp:HOST:PORT, vsock:CID:PORT, [V6]:PORT, each
 * optionally followed by @NAME (named guestN without it), and AGENT@NAME
 * where NAME is not a number. The port defaults to TSYNC_DEFAULT_PORT.
 *
 * Any of these after a dialect's prefix (host/peer/peer.h: peer_dialect())
 * names an agent of that protocol: "tcmd:" a stock `trace-cmd agent`
 * (host/peer/tcmd_session.h) instead of tsync-agent: tcmd:HOST:PORT,
 * tcmd:vsock:CID:PORT, tcmd:NAME@CID, ...; there a form without a port
 * (tcmd:CID, tcmd:NAME@CID, tcmd:CID@NAME, tcmd:NAME) takes the dialect's
 * port, trace-cmd's vsock port 823.
 *
 * The guest's local VM (its QEMU process, what the kvm sync method reads
 * KVM's offsets by) is found from /proc for a vsock guest by its CID, as
 * trace-cmd finds it; a TCP guest names it with --vm VM after its -A (a
 * PID, or the -name of a local QEMU guest): tsync's extension, trace-cmd
 * has none.
 */
#ifndef TSYNC_HOST_AGENT_ARG_H
#define TSYNC_HOST_AGENT_ARG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/net/endpoint.h"
#include "host/peer/peer.h"
#include "host/sync/sync.h"

/* Most agents one command takes. */
#define HOST_MAX_AGENTS 16

struct host_agent_arg {
	struct tsync_endpoint ep;
	char name[64];
	const struct peer_ops *dialect;	/* its protocol, from the prefix */
	pid_t vm_pid;			/* --vm's process; 0: none given */
};

/*
 * Parses @arg into @out (see above); @index numbers the default name
 * "guestN"; local QEMU guests are looked up under @proc_root (NULL:
 * /proc). The caller checks that names are unique (host_agent_list_add()). Returns 0 or -EINVAL
 * with the reason in @err.
 */
int host_agent_arg_parse_in(const char *proc_root, const char *arg, int index,
			    struct host_agent_arg *out, char *err, size_t errlen);

/* host_agent_arg_parse_in() with /proc. */
int host_agent_arg_parse(const char *arg, int index, struct host_agent_arg *out,
			 char *err, size_t errlen);

/*
 * Parses @arg (as host_agent_arg_parse()) into @agents[*@n] and counts it:
 * at most HOST_MAX_AGENTS, each name once. Returns 0, or -1 with @err set
 * ("more than N @what", "two agents named 'NAME'", the parser's reason).
 */
int host_agent_list_add(struct host_agent_arg *agents, int *n, const char *arg,
			const char *what, char *err, size_t errlen);

/*
 * Resolves --vm's @vm (a PID, or the -name of a local QEMU guest under
 * @proc_root, NULL: /proc) into *@pid. Returns 0, or -EINVAL with the
 * reason in @err (no such process or guest, two guests of that name).
 */
int host_agent_vm(const char *proc_root, const char *vm, pid_t *pid, char *err, size_t errlen);
/* --vm @vm for the last of the @n agents of @agents (host_agent_vm()
 * under /proc). Returns 0, or -1 with @err set (no -A before it, or
 * host_agent_vm()'s reason). */
int host_agent_list_vm(struct host_agent_arg *agents, int n, const char *vm, char *err,
		       size_t errlen);

/*
 * Fills @t, what a sync method is told of a guest (host/sync/sync.h): its
 * session @p, its agent's endpoint @ep and its name @name (both kept by
 * pointer), its CPUs (@p's count), and its local VM: @vm_pid (--vm), or
 * else for a vsock guest the QEMU process with its CID under @proc_root
 * (NULL: /proc), else none. The one place a target is made, here beside
 * the lookups of local QEMU guests, so that what a method needs of the
 * guest is found once for `sync` and `record`.
 */
void host_agent_target(struct sync_target *t, const char *proc_root, struct peer *p,
		       const struct tsync_endpoint *ep, const char *name, pid_t vm_pid);

#endif
