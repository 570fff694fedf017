/*
 * fill.c - the FGD paper's fill experiment on the production engine.
 *
 * Metric, as the authors' analysis scripts compute it: after every
 * arrival (placed or failed) the arrived GPU milli grows by k x g; its bin
 * is round(arrived / capacity x 100); the bin collects
 * round(allocated / capacity x 100, 2).  Fragmentation is recorded the same
 * way, as a ratio of idle GPU (100 F / idle) and as a share of capacity.
 */
#include <math.h>
#include <string.h>

#include <gpufleet/err.h>
#include <gpufleet/sim.h>

#include "../util/mem.h"

static int64_t demand(const struct gf_req *r)
{
	return (int64_t)r->ngpus * r->gpu_milli;
}

int gf_fill_arrivals(const struct gf_workload *w, int64_t capacity_milli,
		     const struct gf_fill_opts *o, int **seq_out)
{
	struct gf_rng rng;
	gf_rng_seed(&rng, o->seed);
	int cap = w->n + 16;
	int *seq = gf_calloc((size_t)cap, sizeof(*seq));
	int n = w->n;
	for (int i = 0; i < n; i++)
		seq[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j = (int)gf_rng_below(&rng, (uint64_t)i + 1);
		int t = seq[i];
		seq[i] = seq[j];
		seq[j] = t;
	}
	if (o->resample && n > 0) {
		double target = o->tune * (double)capacity_milli;
		int64_t total = 0;
		for (int i = 0; i < n; i++)
			total += demand(&w->reqs[seq[i]]);
		if ((double)total < target) {
			for (;;) {
				int p = (int)gf_rng_below(&rng, (uint64_t)w->n);
				/* the per-GPU share is checked, as the authors'
				 * code does, not k x g */
				if ((double)(total + w->reqs[p].gpu_milli) >
				    target)
					break;
				total += demand(&w->reqs[p]);
				if (n == cap) {
					cap *= 2;
					seq = gf_reallocarray(seq, (size_t)cap,
							      sizeof(*seq));
				}
				seq[n++] = p;
				if (n >= GF_MAX_REQUESTS)
					break;
			}
		} else {
			while ((double)total > target && n > 0) {
				int k = (int)gf_rng_below(&rng, (uint64_t)n);
				total -= demand(&w->reqs[seq[k]]);
				memmove(&seq[k], &seq[k + 1],
					(size_t)(n - k - 1) * sizeof(*seq));
				n--;
			}
		}
	}
	*seq_out = seq;
	return n;
}

static void rank_nodes(struct gf_cluster *c, uint64_t seed)
{
	struct gf_rng rng;
	gf_rng_seed(&rng, seed ^ UINT64_C(0x6e6f646572616e6b)); /* "noderank" */
	uint32_t *perm = gf_calloc((size_t)c->n, sizeof(*perm));
	for (int i = 0; i < c->n; i++)
		perm[i] = (uint32_t)i;
	for (int i = c->n - 1; i > 0; i--) {
		int j = (int)gf_rng_below(&rng, (uint64_t)i + 1);
		uint32_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (int i = 0; i < c->n; i++)
		c->nodes[i].rank = perm[i];
	gf_free(perm);
}

static void record(struct gf_fill_result *res, const struct gf_sched *s,
		   int64_t capacity)
{
	double cap = (double)capacity;
	double pct = nearbyint((double)res->arrived_milli / cap * 100.0);
	if (pct < 0 || pct >= GF_FILL_BINS)
		return;
	int b = (int)pct;
	res->alloc_sum[b] +=
		nearbyint((double)s->alloc_milli / cap * 100.0 * 100.0) / 100.0;
	if (s->idle_milli > 0)
		res->frag_ratio_sum[b] +=
			100.0 * s->frag_total / (double)s->idle_milli;
	res->frag_amount_sum[b] += 100.0 * s->frag_total / cap;
	res->count[b]++;
}

int gf_fill_run(const struct gf_cluster *c0, const struct gf_workload *w,
		const struct gf_typical *typ, int ntyp,
		const struct gf_fill_opts *o, struct gf_fill_result *res,
		void (*progress)(int done, int total, void *arg), void *arg)
{
	if (c0->gpu_milli_total <= 0 || w->n == 0)
		return GF_EINVAL;
	struct gf_cluster c = *c0;
	c.nodes = gf_calloc((size_t)c0->n, sizeof(*c.nodes));
	memcpy(c.nodes, c0->nodes, (size_t)c0->n * sizeof(*c.nodes));
	c.names = NULL; /* borrowed view: names are not needed here */
	c.cap = c0->n;
	rank_nodes(&c, o->seed);
	int *seq;
	int n = gf_fill_arrivals(w, c.gpu_milli_total, o, &seq);
	struct gf_sched s;
	int rc = gf_sched_init(
		&s, &c, o->policy, typ, ntyp, w->nclasses > 0 ? w->nclasses : 1,
		o->seed ^ UINT64_C(0x706f6c696379)); /* "policy" */
	if (rc) {
		gf_free(seq);
		gf_free(c.nodes);
		return rc;
	}
	memset(res, 0, sizeof(*res));
	for (int i = 0; i < n; i++) {
		const struct gf_req *r = &w->reqs[seq[i]];
		struct gf_placement p;
		if (gf_sched_place(&s, r, &p) != 0)
			res->failed++;
		res->arrived_milli += demand(r);
		res->arrivals++;
		record(res, &s, c.gpu_milli_total);
		if (progress && (i & 1023) == 1023)
			progress(i + 1, n, arg);
	}
	gf_sched_release(&s);
	gf_free(seq);
	gf_free(c.nodes);
	return 0;
}

bool gf_fill_value(const struct gf_fill_result *r, const double *sum, int pct,
		   double *out)
{
	if (pct < 0 || pct >= GF_FILL_BINS)
		return false;
	if (r->count[pct] > 0) {
		*out = sum[pct] / r->count[pct];
		return true;
	}
	double s = 0;
	int k = 0;
	for (int b = pct - 1; b <= pct + 1; b += 2)
		if (b >= 0 && b < GF_FILL_BINS) {
			s += sum[b];
			k += r->count[b];
		}
	if (k == 0)
		return false;
	*out = s / k;
	return true;
}
