/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The version of tsync, the one definition (debian/changelog agrees). */
#ifndef TSYNC_COMMON_VERSION_H
#define TSYNC_COMMON_VERSION_H

#define TSYNC_VERSION "0.1.0"

#endif
