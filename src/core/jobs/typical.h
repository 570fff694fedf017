/*
 * typical.h - internal to src/core/jobs (typical.c): the FGD typical mix
 * the core learns from the arrivals it sees, decayed, and hands to the
 * engine; the learner alone (gf__mixlearn_*) is pure and tested apart.
 */
#ifndef GF_CORE_JOBS_TYPICAL_H
#define GF_CORE_JOBS_TYPICAL_H

#include <gpufleet/frag.h>

/* Arrivals (replicas) over which an old arrival's weight falls by e. */
#define GF_MIX_HORIZON 4096.0
/* What the prior (the default mix) weighs, in arrivals, at the start. */
#define GF_MIX_PRIOR 16.0
/* Shapes the learner keeps at most (the Alibaba traces have 49 to 330):
 * a new one past it first drops those that weigh under GF_MIX_NEGLIGIBLE
 * of the whole (seen some 85,000 arrivals ago), then the lightest. */
#define GF_MIX_SHAPES_MAX 1024
#define GF_MIX_NEGLIGIBLE 1e-9

/* One shape seen and its decayed weight. */
struct gf__mixent {
	struct gf_typical t; /* p unused here */
	double w;
};

/*
 * The learner: every arrival of a shape adds weight `inc` to it, and
 * inc grows by 1 / (1 - 1 / GF_MIX_HORIZON) per arrival, so an arrival
 * k arrivals old weighs (1 - 1 / H)^k of a new one (rescaled before it
 * overflows).  seen: arrivals observed; mass: the weights' sum.
 */
struct gf__mixlearn {
	struct gf__mixent *e;
	int n, cap;
	double inc, mass;
	int64_t seen;
};

void gf__mixlearn_init(struct gf__mixlearn *l);
void gf__mixlearn_free(struct gf__mixlearn *l);
/* count arrivals of r's shape (cpu, share, GPU count, spec). */
void gf__mixlearn_add(struct gf__mixlearn *l, const struct gf_req *r,
		      int64_t count);
/* The mix as FGD reads it: shapes by weight, the heaviest first (ties:
 * the larger key), the shortest prefix covering `coverage` of the
 * weight, p renormalised; *out allocated (gf_free); returns the count,
 * or GF_EINVAL when nothing was learned. */
int gf__mixlearn_build(const struct gf__mixlearn *l, double coverage,
		       struct gf_typical **out) GF_MUST_CHECK;

struct gf_ctl;
int gf__typical_default(struct gf_ctl *ctl);
void gf__typical_refresh(struct gf_ctl *ctl, bool force);
/* count replicas of r arrived: learned, the mix rebuilt later */
void gf__typical_arrived(struct gf_ctl *ctl, const struct gf_req *r,
			 int64_t count);
void gf__typical_free(struct gf_ctl *ctl);

#endif
