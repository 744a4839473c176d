// SPDX-License-Identifier: GPL-2.0-or-later
/* A record guest running trace-cmd's agent; see tcmd_guest.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base/cpu.h"
#include "common/stamp/stamp.h"
#include "common/tracemeta/tracemeta.h"
#include "host/peer/tcmd_guest.h"
#include "host/peer/tcmd_meta.h"
#include "host/peer/tcmd_ptp.h"
#include "host/peer/tcmd_session.h"

#define FIXED_ARGS 7		/* -C CLOCK --file-version 6 -d -k --no-filter */
#define META_MAX TRACEMETA_MAX_TOTAL

struct tcmd_guest {
	struct tcmd_session *s;
	struct tsync_stamper *st;
	char clock[32];
	uint32_t round;
	int nhost;
	char opts[256];			/* the guest's option words, for messages */
};

/* Builds the guest's argv (see tcmd_guest.h) into @argv; returns argc. */
static int make_argv(const struct tcmd_guest_opts *o, const char **argv)
{
	int n = 0;

	argv[n++] = "-C";
	argv[n++] = o->clock;
	argv[n++] = "--file-version";
	argv[n++] = "6";
	argv[n++] = "-d";
	argv[n++] = "-k";
	argv[n++] = "--no-filter";
	for (int i = 0; i < o->argc; i++)
		argv[n++] = o->argv[i];
	return n;
}

/* Joins the guest's option words of @o into @t->opts (cut with "..."). */
static void keep_opts(struct tcmd_guest *t, const struct tcmd_guest_opts *o)
{
	size_t len = 0;

	for (int i = 0; i < o->argc && len < sizeof(t->opts); i++)
		len += (size_t)snprintf(t->opts + len, sizeof(t->opts) - len, "%s%s",
					i ? " " : "", o->argv[i]);
	if (len >= sizeof(t->opts))
		snprintf(t->opts + sizeof(t->opts) - 4, 4, "...");
}

/* Opens a guest; see tcmd_guest.h. */
int tcmd_guest_open(const struct tsync_endpoint *ep, const struct tcmd_guest_opts *o,
		    struct tcmd_guest **out, char *err, size_t errlen)
{
	const char **argv = calloc((size_t)FIXED_ARGS + (size_t)o->argc + 1, sizeof(*argv));
	struct tcmd_guest *t = calloc(1, sizeof(*t));
	struct tcmd_session_opts so = {
		.connect_timeout_ms = o->connect_timeout_ms, .io_timeout_ms = o->io_timeout_ms,
		.quickack = o->quickack, .host_trace_id = o->host_trace_id, .argv = argv,
	};
	int ret = -ENOMEM;

	if (!argv || !t) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	snprintf(t->clock, sizeof(t->clock), "%s", o->clock);
	t->nhost = tsync_cpu_count();
	so.argc = make_argv(o, argv);
	keep_opts(t, o);
	ret = tsync_stamp_open(o->source, o->clock, "tcmd", 0, &t->st);
	if (ret) {
		snprintf(err, errlen, "timestamp source %s for clock %s: %s",
			 tsync_stamp_source_name(o->source), o->clock, strerror(-ret));
		goto fail;
	}
	ret = tcmd_session_open(ep, &so, &t->s, err, errlen);
	if (ret)
		goto fail;
	free(argv);
	*out = t;
	return 0;
fail:
	free(argv);
	tcmd_guest_free(t);
	return ret;
}

/* Accessors; see tcmd_guest.h. */
uint32_t tcmd_guest_ncpus(const struct tcmd_guest *t) { return t->s->ncpus; }
uint32_t tcmd_guest_page_size(const struct tcmd_guest *t) { return t->s->page_size; }
uint64_t tcmd_guest_trace_id(const struct tcmd_guest *t) { return t->s->guest_trace_id; }

/* Takes one sample; see tcmd_guest.h. */
int tcmd_guest_sample(struct tcmd_guest *t, uint32_t cpu, pthread_mutex_t *locks,
		      int64_t *ts, int64_t *offset, char *err, size_t errlen)
{
	int hc = (int)(cpu % (uint32_t)t->nhost);
	struct tcmd_ptp_result r;
	int ret;

	if (locks)
		pthread_mutex_lock(&locks[hc]);
	ret = tcmd_ptp_sample(&t->s->ts, t->st, ++t->round, cpu, hc, &r, err, errlen);
	if (locks)
		pthread_mutex_unlock(&locks[hc]);
	*ts = r.ts;
	*offset = r.offset;
	/* trace-cmd's agent answers TRACE_REQ before it parses the options:
	 * one it refuses ends its recorder, and the session, here */
	if (t->round == 1 && (ret == -EPIPE || ret == -ECONNRESET))
		snprintf(err, errlen, "the trace-cmd agent ended the session as it started: "
			 "it refused a guest option (%s), its own output says which",
			 t->opts[0] ? t->opts : "none given");
	return ret;
}

/* Reads the metadata; see tcmd_guest.h. */
int tcmd_guest_meta(struct tcmd_guest *t, struct tracemeta **out, char *err, size_t errlen)
{
	uint8_t *buf = NULL;
	uint32_t cpus = 0;
	size_t len = 0;
	int ret;

	ret = tcmd_session_meta(t->s, META_MAX, &buf, &len, err, errlen);
	if (!ret)
		ret = tcmd_meta_parse(buf, len, t->s->page_size, t->clock, &cpus, out, err,
				      errlen);
	free(buf);
	if (!ret && cpus != t->s->ncpus) {
		snprintf(err, errlen, "the trace-cmd agent's metadata has %u CPUs, its reply %u",
			 cpus, t->s->ncpus);
		tracemeta_free(*out);
		*out = NULL;
		ret = -EPROTO;
	}
	return ret;
}

/* Connects a stream; see tcmd_guest.h. */
int tcmd_guest_stream(struct tcmd_guest *t, uint32_t cpu, int *fd, char *err, size_t errlen)
{
	return tcmd_session_stream(t->s, cpu, fd, err, errlen);
}

/* Stops the recording; see tcmd_guest.h. */
int tcmd_guest_stop(struct tcmd_guest *t, char *err, size_t errlen)
{
	int ret = tcmd_session_close(t->s, err, errlen);

	return ret ? ret : tcmd_ptp_stop(&t->s->ts, err, errlen);
}

/* Waits for the end; see tcmd_guest.h. */
int tcmd_guest_wait_closed(struct tcmd_guest *t, char *err, size_t errlen)
{
	return tcmd_session_wait_closed(t->s, err, errlen);
}

/* Frees a guest; see tcmd_guest.h. */
void tcmd_guest_free(struct tcmd_guest *t)
{
	if (!t)
		return;
	tcmd_session_free(t->s);
	tsync_stamp_close(t->st);
	free(t);
}
