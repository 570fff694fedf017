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
#include <stdlib.h> /* free: gf_typical_build */
#include <string.h>

#include <gpufleet/err.h>
#include <gpufleet/rng.h>
#include <gpufleet/sim.h>

#include "util/mem.h"

static int64_t demand(const struct gf_req *r)
{
	return (int64_t)r->ngpus * r->gpu_milli;
}

/* Steps between two GF_FILL_DRAW reports (a power of two). */
#define DRAW_REPORT_STEPS 65536

struct draw {
	gf_fill_progress_fn fn;
	void *arg;
	int done, total; /* total: an estimate, kept above done */
};

static void draw_step(struct draw *d)
{
	d->done++;
	if (d->done >= d->total)
		d->total = d->done + 1;
	if (d->fn && (d->done & (DRAW_REPORT_STEPS - 1)) == 0)
		d->fn(GF_FILL_DRAW, d->done, d->total, d->arg);
}

/*
 * A request of the sequence with its GPU demand beside it: the loops below
 * touch positions at random, and reading the demand through the request
 * (a second random access, into a far larger array) was most of their
 * time.  A demand is at most 16 x 1000 milli.
 */
struct slot {
	int32_t req;
	int32_t milli;
};

/*
 * Above the target: delete the k-th of the requests left (k uniform)
 * until the demand is at most the target.  Deleting in place (a memmove
 * each) made this quadratic: 2M requests took minutes.  A Fenwick tree
 * over the positions (1 while present) finds the k-th left in O(log n);
 * the survivors are compacted, in order, whenever half are gone (so the
 * arrays shrink as they empty, O(n) in all) and at the end: the same
 * draws, the same sequence.  Returns the count left.
 */
static int trim(struct slot *seq, int n, int64_t total, double target,
		struct gf_rng *rng, struct draw *d)
{
	int *tree = gf_calloc((size_t)n + 1, sizeof(*tree));
	while ((double)total > target && n > 0) {
		for (int i = 1; i <= n; i++) /* all ones, built in O(n) */
			tree[i] = 1;
		for (int i = 1; i <= n; i++) {
			int j = i + (i & -i);
			if (j <= n)
				tree[j] += tree[i];
		}
		int top = 1;
		while (top <= n / 2)
			top *= 2;
		int left = n;
		while ((double)total > target && left > 0 &&
		       (left > n / 2 || n < 4096)) {
			int rem = (int)gf_rng_below(rng, (uint64_t)left) + 1;
			int pos = 0; /* the last position with prefix < rem */
			for (int step = top; step > 0; step >>= 1)
				if (pos + step <= n && tree[pos + step] < rem) {
					pos += step;
					rem -= tree[pos];
				}
			total -= seq[pos].milli;
			seq[pos].req = -1;
			for (int i = pos + 1; i <= n; i += i & -i)
				tree[i]--;
			left--;
			draw_step(d);
		}
		int m = 0;
		for (int i = 0; i < n; i++)
			if (seq[i].req >= 0)
				seq[m++] = seq[i];
		n = m;
	}
	gf_free(tree);
	return n;
}

/* Steps the resampling is likely to take: the gap over the mean demand. */
static int resample_estimate(int64_t total, double target, int n)
{
	if (n == 0)
		return 0;
	double gap = (double)total > target ? (double)total - target
					    : target - (double)total;
	double mean = (double)total / n;
	double est = mean > 0 ? gap / mean : (double)GF_MAX_REQUESTS;
	double cap = (double)total > target ? n : GF_MAX_REQUESTS - n;
	return (int)(est < cap ? est : cap);
}

int gf_fill_arrivals_progress(const struct gf_workload *w,
			      int64_t capacity_milli,
			      const struct gf_fill_opts *o, int **seq_out,
			      gf_fill_progress_fn progress, void *arg)
{
	struct gf_rng rng;
	gf_rng_seed(&rng, o->seed);
	int cap = w->n + 16;
	struct slot *seq = gf_calloc((size_t)cap, sizeof(*seq));
	int n = w->n;
	double target = o->tune * (double)capacity_milli;
	int64_t total = 0;
	for (int i = 0; i < n; i++) {
		seq[i].req = i;
		seq[i].milli = (int32_t)demand(&w->reqs[i]);
		total += seq[i].milli;
	}
	struct draw d = { .fn = progress, .arg = arg, .total = n };
	if (o->resample)
		d.total += resample_estimate(total, target, n);
	for (int i = n - 1; i > 0; i--) {
		int j = (int)gf_rng_below(&rng, (uint64_t)i + 1);
		struct slot t = seq[i];
		seq[i] = seq[j];
		seq[j] = t;
		draw_step(&d);
	}
	if (o->resample && n > 0) {
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
				seq[n].req = p;
				seq[n++].milli = (int32_t)demand(&w->reqs[p]);
				draw_step(&d);
				if (n >= GF_MAX_REQUESTS)
					break;
			}
		} else {
			n = trim(seq, n, total, target, &rng, &d);
		}
	}
	int *out = gf_calloc((size_t)n + 1, sizeof(*out));
	for (int i = 0; i < n; i++)
		out[i] = seq[i].req;
	gf_free(seq);
	if (progress)
		progress(GF_FILL_DRAW, d.done, d.done, arg);
	*seq_out = out;
	return n;
}

int gf_fill_arrivals(const struct gf_workload *w, int64_t capacity_milli,
		     const struct gf_fill_opts *o, int **seq_out)
{
	return gf_fill_arrivals_progress(w, capacity_milli, o, seq_out, NULL,
					 NULL);
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
	int64_t alloc = gf_sched_alloc_milli(s), idle = gf_sched_idle_milli(s);
	double frag = gf_sched_frag_total(s);
	res->alloc_sum[b] +=
		nearbyint((double)alloc / cap * 100.0 * 100.0) / 100.0;
	if (idle > 0)
		res->frag_ratio_sum[b] += 100.0 * frag / (double)idle;
	res->frag_amount_sum[b] += 100.0 * frag / cap;
	res->count[b]++;
}

int gf_fill_run(const struct gf_cluster *c0, const struct gf_workload *w,
		const struct gf_typical *typ, int ntyp,
		const struct gf_fill_opts *o, struct gf_fill_result *res,
		gf_fill_progress_fn progress, void *arg)
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
	int n = gf_fill_arrivals_progress(w, c.gpu_milli_total, o, &seq,
					  progress, arg);
	struct gf_sched *s;
	int rc = gf_sched_new(&c, o->policy, typ, ntyp,
			      w->nclasses > 0 ? w->nclasses : 1,
			      o->seed ^ UINT64_C(0x706f6c696379), /* "policy" */
			      &s);
	/* FGD+'s pressure reads the whole mix the typical one is drawn
	 * from (gf_sched_set_mix) */
	struct gf_typical *mix = NULL;
	if (rc == 0 && (gf_policy_flags(o->policy) & GF_POLICY_LOOKAHEAD)) {
		int nmix = gf_typical_build(w->reqs, w->n, 1.0, &mix);
		if (nmix > 0)
			gf_sched_set_mix(s, mix, nmix);
	}
	if (rc == 0 && o->fgdplus_t > 0)
		rc = gf_sched_set_fgdplus_t(s, o->fgdplus_t);
	if (rc == 0)
		rc = gf_sched_set_fgdplus_without(s, o->fgdplus_without);
	if (rc) {
		gf_sched_free(s);
		free(mix);
		gf_free(seq);
		gf_free(c.nodes);
		return rc;
	}
	memset(res, 0, sizeof(*res));
	if (progress)
		progress(GF_FILL_PLACE, 0, n, arg);
	for (int i = 0; i < n; i++) {
		const struct gf_req *r = &w->reqs[seq[i]];
		struct gf_placement p;
		if (gf_sched_place(s, r, &p) != 0)
			res->failed++;
		res->arrived_milli += demand(r);
		res->arrivals++;
		record(res, s, c.gpu_milli_total);
		if (progress && ((i & 1023) == 1023 || i == n - 1))
			progress(GF_FILL_PLACE, i + 1, n, arg);
	}
	gf_sched_free(s);
	free(mix);
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
