/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the TCP backend (tcp.c) offers beyond its ops table
 * (tsync_tcp_ops in common/net/transport.h): reading TCP_NODELAY back, for the
 * tests and the Nagle benchmark that check every socket has it.
 */
#ifndef TSYNC_TCP_H
#define TSYNC_TCP_H

/* Returns 1 if TCP_NODELAY is set on @fd, 0 if not, -errno on error (a
 * socket that is not TCP included). */
int tsync_sock_get_nodelay(int fd);

#endif
