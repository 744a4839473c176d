// SPDX-License-Identifier: GPL-2.0-or-later
/* The vsock backend: the normal transport between a host and its VMs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <linux/vm_sockets.h>

#include "common/net/transport.h"

/*
 * Builds the one sockaddr_vm for @ep; returns 1, or -EINVAL with a reason
 * for a listen on port 0: vsock's "any port" (VMADDR_PORT_ANY) hands out
 * 32-bit ports that no endpoint string could name, and a literal port 0 is
 * not what "pick a free port" means. Unless @ep->vsock_port_any asks for
 * exactly that (a port only ever reported to the peer).
 */
static int vsock_resolve(const struct tsync_endpoint *ep, int passive,
			 struct sockaddr_storage *addrs, socklen_t *lens,
			 int *families, int max, char *err, size_t errlen)
{
	struct sockaddr_vm *vm = (struct sockaddr_vm *)&addrs[0];

	if (passive && ep->port == 0 && !ep->vsock_port_any) {
		char name[64];

		snprintf(err, errlen, "cannot listen on %s: vsock has no free-port choice "
			 "in 1-65535, give a port number",
			 tsync_endpoint_format(ep, name, sizeof(name)));
		return -EINVAL;
	}
	if (max < 1) {
		snprintf(err, errlen, "no room for an address");
		return -EINVAL;
	}
	memset(&addrs[0], 0, sizeof(addrs[0]));
	vm->svm_family = AF_VSOCK;
	vm->svm_cid = ep->cid;
	vm->svm_port = passive && ep->port == 0 ? VMADDR_PORT_ANY :
		       !passive && ep->vsock_port32 ? ep->vsock_port32 : ep->port;
	lens[0] = sizeof(*vm);
	families[0] = AF_VSOCK;
	return 1;
}

/* vsock has no Nagle; nothing to set. No listen_setup either: vsock has
 * no TIME_WAIT to reuse a port through. */
static int vsock_setup(int fd)
{
	(void)fd;
	return 0;
}

/* Formats a vsock address as vsock:CID:PORT ("any" for VMADDR_CID_ANY, so
 * that a listener's name parses back as an endpoint). */
static void vsock_format(const struct sockaddr_storage *ss, socklen_t len,
			 char *buf, size_t buflen)
{
	const struct sockaddr_vm *vm = (const struct sockaddr_vm *)ss;

	(void)len;
	if (vm->svm_cid == VMADDR_CID_ANY)
		snprintf(buf, buflen, "vsock:any:%u", vm->svm_port);
	else
		snprintf(buf, buflen, "vsock:%u:%u", vm->svm_cid, vm->svm_port);
}

/* AF_VSOCK addresses are vsock's. */
static int vsock_has_family(int family)
{
	return family == AF_VSOCK;
}

/* Returns the port of a vsock address. */
static uint32_t vsock_port(const struct sockaddr_storage *ss)
{
	return ((const struct sockaddr_vm *)ss)->svm_port;
}

/*
 * ENODEV/ENXIO ("No such device") from connect(): no vsock transport for
 * that CID; EAFNOSUPPORT from socket(): no vsock in the kernel at all.
 */
static const char *vsock_hint(int err)
{
	if (err == ENODEV || err == ENXIO || err == EAFNOSUPPORT)
		return "this host has no vsock transport (modprobe vhost_vsock), "
		       "or this guest has no vsock device";
	if (err == ECONNREFUSED || err == ECONNRESET)
		return "no tsync-agent listens on that CID and port: is it running in "
		       "the guest (tsync-agent -l vsock:any:8823)?";
	if (err == ETIMEDOUT)
		return "no answer from that CID: is the guest running, with that CID?";
	return NULL;
}

const struct tsync_transport_ops tsync_vsock_ops = {
	.kind = TSYNC_EP_VSOCK,
	.name = "vsock",
	.resolve = vsock_resolve,
	.setup = vsock_setup,
	.format = vsock_format,
	.has_family = vsock_has_family,
	.port = vsock_port,
	.hint = vsock_hint,
};
