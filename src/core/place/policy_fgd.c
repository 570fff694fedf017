/*
 * policy_fgd.c - FGD (fragmentation gradient descent): 100 sigma(dF/1000),
 * dF the drop in the node's fragmentation against the typical workload
 * (frag.h) if the request lands there; a fractional request takes the
 * GPU whose share gives the largest drop.
 */
#include <math.h>

#include "core/place/sched_impl.h"

#define MAX_SCORE 100

static int sigmoid_score(double delta)
{
	return (int)(MAX_SCORE * (1.0 / (1.0 + exp(-delta / 1000.0))));
}

/* The score of the state a request leaves: the drop in F, squashed. */
static int after_fgd(const struct gf__scoring *at, const struct gf_req *r,
		     double now, const int16_t *left, int32_t cpu, int g)
{
	(void)r;
	(void)g;
	const struct gf_sched *s = at->s;
	double after = gf_frag_state(s->typ, s->ntyp, at->n->model, cpu, left,
				     at->n->ngpus);
	return sigmoid_score(now - after);
}

int gf__score_fgd(struct gf__scoring *at, const struct gf_req *r)
{
	return gf__score_after(at, r, at->frag_now, after_fgd, -1);
}
