/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Inside the sync-method interface (host/sync/sync.h): what a method
 * implements, as trace-cmd's tracecmd_tsync_proto_register() takes it
 * (a name, an accuracy rank, init, free, calc). A method is one struct
 * sync_method_ops in its own file and a row in host/sync/sync.c's list;
 * nothing else names it. Nothing but the methods, sync.c and their unit
 * tests includes this.
 *
 * The contracts:
 *   usable   0 when the method can sync target @t with @o's clock; else
 *            -errno and one line in @why saying what is missing ("not a
 *            local KVM guest", "clock local is not the TSC"). No I/O with
 *            the guest beyond what its peer already knows; may read the
 *            host (debugfs, /dev). -ENODEV: the method does not apply to
 *            this guest at all, nothing worth saying (@why unused).
 *   open     sets up whatever the samples need (@state: the method's own,
 *            handed back to sample and close); 0 or -errno with @err.
 *   sample   one sample of guest CPU @cpu into @res, as
 *            sync_method_sample() (sync.h) returns; @res is zeroed first
 *            and res->cpu set. -ENOENT: the method's own source is
 *            gone for good (kvm: the VM's files), not the guest's peer;
 *            sync.c then goes on with the best method ranked after it
 *            (its fallback then says why). A method that reads an offset directly
 *            fills guest_ts (the guest time it read at), offset_ns,
 *            scaling and frac, and its error bound; probes stay 0.
 *   info     what `sync` prints of it (struct sync_info); may be NULL.
 *   detail   one line of what the method knows beyond the samples
 *            (sync_method_detail()); may be NULL.
 *   changes  fills how many times a sample showed the guest's clock
 *            relation rewritten (kvm: a vCPU's offset or scaling), and
 *            where they were cut; may be NULL.
 *   max_interval_ns  the longest wait between two samples of a CPU that
 *            keeps them exact (kvm: a scaled vCPU's span), INT64_MAX for
 *            none; may be NULL (none).
 *   close    frees @state (NULL is fine).
 */
#ifndef TSYNC_HOST_SYNC_PRIV_H
#define TSYNC_HOST_SYNC_PRIV_H

#include "host/sync/sync.h"

struct sync_method_ops {
	const char *name;		/* as `sync` and `record` print it */
	int rank;			/* accuracy rank: lower is better */
	const char *clock;		/* the only trace clock it serves; NULL: any */
	int (*usable)(const struct sync_target *t, const struct round_opts *o, char *why,
		      size_t whylen);
	int (*open)(const struct sync_target *t, const struct round_opts *o, void **state,
		    char *err, size_t errlen);
	int (*sample)(void *state, uint32_t cpu, const struct round_opts *o,
		      struct sync_result *res);
	void (*info)(const void *state, const struct round_opts *o, struct sync_info *info);
	void (*changes)(const void *state, struct sync_changes *c);
	/* what the method knows of the clocks beyond the sample (external:
	 * each daemon's state), one line; may be NULL */
	const char *(*detail)(void *state);
	int64_t (*max_interval_ns)(const void *state);
	void (*close)(void *state);
};

/* The methods (host/sync/sync.c lists them). */
extern const struct sync_method_ops sync_kvm_ops;	/* host/sync/kvm.c */
extern const struct sync_method_ops sync_probes_ops;	/* host/sync/probes.c */
extern const struct sync_method_ops sync_external_ops;	/* host/sync/external.c */

/*
 * Picks from the @n methods of @list the best-ranked (lowest rank; the
 * first listed of equals) whose usable() accepts @t and @o. Returns 0 and
 * it in @out with @err saying why the better-ranked ones were not usable
 * ("a: why; b: why", in list order, leaving out those whose usable()
 * returned -ENODEV; "" when none was better), or
 * -EOPNOTSUPP when none is usable, with "no sync method for NAME: a: why;
 * b: why" in @err. Pure apart from what usable() reads.
 */
int sync_pick(const struct sync_method_ops *const *list, size_t n, const struct sync_target *t,
	      const struct round_opts *o, const struct sync_method_ops **out, char *err,
	      size_t errlen);

/* Turns probe round @r into sample @res (scaling 1, frac 0): the probe
 * method's arithmetic, pure. */
void sync_probes_result(const struct round_result *r, struct sync_result *res);

#endif
