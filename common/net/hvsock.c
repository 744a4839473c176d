// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The hybrid vsock backend (hvsock:PATH:PORT): the way into a guest of
 * Firecracker or cloud-hypervisor. These VMMs serve the guest's vsock
 * device themselves, with no AF_VSOCK on the host: the host reaches the
 * guest's vsock port through a Unix socket of the VMM (its uds_path).
 * Connect only: there is nothing for a host to listen on.
 *
 * Theory of operation: the handshake, as Firecracker's docs/vsock.md
 * ("Host-Initiated Connections") specifies it, and cloud-hypervisor, whose
 * vsock device is Firecracker's, does the same:
 *
 *   1. connect() to the Unix socket PATH;
 *   2. send "CONNECT <PORT>\n" (PORT in decimal, '\n' is 0x0a);
 *   3. the VMM connects to vsock port PORT of the guest. If the guest
 *      accepts, it answers "OK <HOSTPORT>\n", HOSTPORT being the vsock
 *      port it gave the host's end (a 32-bit number, 1073741824 and up in
 *      Firecracker); if nothing listens there, it closes the connection
 *      without a word;
 *   4. from then on the socket is the byte stream to the guest.
 *
 * The answer is read one byte at a time, so that no byte of the stream
 * after it is taken from the caller. States, and how each ends:
 *
 *   SENT       nothing read yet: closed -> -ECONNREFUSED (nothing listens
 *              on PORT in the guest), deadline -> -ETIMEDOUT
 *   ANSWERING  part of a line: closed -> -ECONNRESET, deadline ->
 *              -ETIMEDOUT, more than HVSOCK_ANSWER_MAX bytes -> -EPROTO
 *   OPEN       '\n' after "OK " and 1-10 digits that fit 32 bits; any
 *              other line -> -EPROTO
 *
 * The whole handshake shares the connect's deadline.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "common/base/io.h"
#include "common/base/log.h"
#include "common/net/transport.h"

_Static_assert(TSYNC_EP_PATH_MAX == sizeof(((struct sockaddr_un *)0)->sun_path),
	       "an endpoint's path fits sun_path exactly");

/* "OK 4294967295\n" is 14 bytes; a longer line is not an answer. */
#define HVSOCK_ANSWER_MAX 32

/* Returns the guest port of @ep (a peer's report above 65535, or the
 * endpoint's own). */
static uint32_t guest_port(const struct tsync_endpoint *ep)
{
	return ep->vsock_port32 ? ep->vsock_port32 : ep->port;
}

/* Builds the sockaddr_un of the VMM's socket; listening is refused. */
static int hvsock_resolve(const struct tsync_endpoint *ep, int passive,
			  struct sockaddr_storage *addrs, socklen_t *lens,
			  int *families, int max, char *err, size_t errlen)
{
	struct sockaddr_un *un = (struct sockaddr_un *)&addrs[0];
	size_t plen = strnlen(ep->path, sizeof(ep->path));
	char name[TSYNC_EP_PATH_MAX + 32];

	tsync_endpoint_format(ep, name, sizeof(name));
	if (passive) {
		snprintf(err, errlen, "cannot listen on %s: hvsock is how a host reaches a "
			 "Firecracker or cloud-hypervisor guest; in the guest, listen on "
			 "vsock:any:PORT", name);
		return -EINVAL;
	}
	if (max < 1 || !plen || plen >= sizeof(un->sun_path)) {
		snprintf(err, errlen, "%s: no socket path that fits", name);
		return -EINVAL;
	}
	memset(&addrs[0], 0, sizeof(addrs[0]));
	un->sun_family = AF_UNIX;
	memcpy(un->sun_path, ep->path, plen + 1);
	lens[0] = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + plen + 1);
	families[0] = AF_UNIX;
	return 1;
}

/* A Unix socket has no Nagle to turn off: nothing to set. */
static int hvsock_setup(int fd)
{
	(void)fd;
	return 0;
}

/* Formats the VMM's socket address (the port is not in it: connections
 * are named by their endpoint, .name_by_endpoint). */
static void hvsock_format(const struct sockaddr_storage *ss, socklen_t len,
			  char *buf, size_t buflen)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)ss;
	size_t max = len > offsetof(struct sockaddr_un, sun_path) ?
		     len - offsetof(struct sockaddr_un, sun_path) : 0;

	snprintf(buf, buflen, "hvsock:%.*s", (int)strnlen(un->sun_path, max), un->sun_path);
}

/* No socket is hvsock's by its family: an AF_UNIX socket could be
 * anything, and hvsock has no listeners nor accepted connections. */
static int hvsock_has_family(int family)
{
	(void)family;
	return 0;
}

/* No listener, so no bound port. */
static uint32_t hvsock_port(const struct sockaddr_storage *ss)
{
	(void)ss;
	return 0;
}

/* What a failed connect() to the VMM's socket means. */
static const char *hvsock_hint(int err)
{
	if (err == ENOENT)
		return "no such socket: is the VMM running, with its vsock device's "
		       "uds_path there?";
	if (err == ECONNREFUSED)
		return "nothing listens on that socket: is the VMM (Firecracker, "
		       "cloud-hypervisor) still running?";
	if (err == EACCES || err == EPERM)
		return "no permission to connect to that socket: run as its owner";
	if (err == ENOTSOCK)
		return "that file is no socket: give the vsock device's uds_path";
	return NULL;
}

/* Copies the @n bytes of @in into @out (@outlen bytes) printable: other
 * bytes as \xNN. */
static void show(const char *in, size_t n, char *out, size_t outlen)
{
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && o + 5 < outlen; i++) {
		if (isprint((unsigned char)in[i]))
			out[o++] = in[i];
		else
			o += (size_t)snprintf(out + o, outlen - o, "\\x%02x",
					      (unsigned char)in[i]);
		out[o] = '\0';
	}
}

/* Parses the answer line @line (@n bytes, without '\n') as "OK PORT".
 * Returns 0 and the port in @port, or -EPROTO. */
static int parse_ok(const char *line, size_t n, uint32_t *port)
{
	uint64_t v = 0;

	if (n < 4 || n > 13 || memcmp(line, "OK ", 3))
		return -EPROTO;
	for (size_t i = 3; i < n; i++) {
		if (!isdigit((unsigned char)line[i]))
			return -EPROTO;
		v = v * 10 + (uint64_t)(line[i] - '0');
	}
	if (v > UINT32_MAX)
		return -EPROTO;
	*port = (uint32_t)v;
	return 0;
}

/* Sends CONNECT and reads the VMM's answer; see the top of the file. */
static int hvsock_handshake(int fd, const struct tsync_endpoint *ep, int64_t deadline,
			    char *err, size_t errlen)
{
	char req[32], line[HVSOCK_ANSWER_MAX], seen[HVSOCK_ANSWER_MAX * 4 + 1];
	uint32_t port = guest_port(ep), hostport;
	size_t n = 0;
	int len, ret;

	len = snprintf(req, sizeof(req), "CONNECT %u\n", port);
	ret = tsync_write_full(fd, req, (size_t)len, deadline);
	if (ret) {
		snprintf(err, errlen, "sending CONNECT %u to the VMM: %s", port,
			 ret == -ETIMEDOUT ? "timed out" : strerror(-ret));
		return ret;
	}
	for (;;) {
		ret = tsync_read_full(fd, &line[n], 1, deadline);
		if (ret)
			break;
		if (line[n] == '\n')
			break;
		if (++n == sizeof(line)) {
			ret = -EPROTO;
			break;
		}
	}
	show(line, n, seen, sizeof(seen));
	if (ret == -ETIMEDOUT) {
		snprintf(err, errlen, "no answer to CONNECT %u in time%s%s%s: is this the "
			 "vsock socket (uds_path) of a Firecracker or cloud-hypervisor guest?",
			 port, n ? " ('" : "", seen, n ? "' so far)" : "");
		return ret;
	}
	if ((ret == -EPIPE || ret == -ECONNRESET) && !n) {
		snprintf(err, errlen, "the VMM closed the connection after CONNECT %u without OK: "
			 "nothing listens on vsock port %u in the guest (is tsync-agent running "
			 "there, -l vsock:any:%u?)", port, port, port);
		return -ECONNREFUSED;
	}
	if (ret == -EPIPE || ret == -ECONNRESET) {
		snprintf(err, errlen, "the VMM closed the connection in the middle of its answer "
			 "to CONNECT %u ('%s' so far)", port, seen);
		return -ECONNRESET;
	}
	if (ret == -EPROTO || (!ret && parse_ok(line, n, &hostport))) {
		snprintf(err, errlen, "the VMM answered '%s%s' to CONNECT %u, not 'OK PORT'",
			 seen, ret ? "..." : "", port);
		return -EPROTO;
	}
	if (ret) {
		snprintf(err, errlen, "reading the answer to CONNECT %u: %s", port, strerror(-ret));
		return ret;
	}
	log_debug("hvsock:%s: CONNECT %u: OK, the host's end is vsock port %u", ep->path,
		  port, hostport);
	return 0;
}

const struct tsync_transport_ops tsync_hvsock_ops = {
	.kind = TSYNC_EP_HVSOCK,
	.name = "hvsock",
	.resolve = hvsock_resolve,
	.setup = hvsock_setup,
	.format = hvsock_format,
	.has_family = hvsock_has_family,
	.port = hvsock_port,
	.hint = hvsock_hint,
	.handshake = hvsock_handshake,
	.name_by_endpoint = true,
};
