/*
 * bound.c - the linear program of bound.h: an upper bound on the GPU
 * any placement gives out, after each arrival of a fill run.
 *
 * Rows: one per request class (at most the arrived count), then per node
 * type CPU, memory, GPU milli and NDFF rows of GPU counts weighed by the
 * dual-feasible functions of Fekete and Schepers, u_k(x) = x when
 * (k + 1) x is whole, else floor((k + 1) x) / k, x the share of one GPU
 * (k = 1: a share over half weighs 1, half weighs 1/2, under half 0).
 * Shares that fit one GPU together weigh at most 1 by every u_k, and a
 * whole GPU weighs 1: so per type the weights sum to at most its GPUs.
 * Then per node type its GPU row and one row per distinct share, for the
 * share patterns (column generation, below).  The class rows are the only
 * bounds that move along the arrivals; the simplex restarts from the last
 * basis and the patterns found so far stay.
 */
#include "sim/bound.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/glpk_lib.h"
#include "util/mem.h"

#define NDFF	  4	     /* u_1 .. u_4 */
#define TROWS	  (3 + NDFF) /* rows per node type */
#define LP_SLACK  1e-6	     /* relative, against the solver's tolerance */
#define CG_ROUNDS 200	     /* column generation rounds a solve, at most */
#define CG_EPS	  1e-7	     /* a pattern must gain this much */

struct ntype {
	int32_t cpu;
	int64_t mem;
	int ngpus, model, count;
};

struct rclass {
	int32_t cpu;
	int64_t mem;
	int ngpus, milli;
	uint32_t spec;
};

struct gf_bound {
	const struct gf_workload *w;
	int64_t capacity;
	struct ntype *t;
	int nt;
	struct rclass *c;
	int nc;
	int *cls_of;  /* per request: its class, -1 without GPU demand */
	int *arrived; /* per class: arrived so far (in the program) */
	int share[GF_GPU_MILLI]; /* the distinct shares under a GPU */
	int nshare;
	int *share_of; /* per class: index into share, -1 for whole GPUs */
	int rounds;    /* column generation rounds a solve, at most */
	glp_prob *lp;
};

static int cmp_i64(int64_t a, int64_t b)
{
	return (a > b) - (a < b);
}

static int cmp_class(const struct rclass *a, const struct rclass *b)
{
	int r = cmp_i64(a->cpu, b->cpu);
	if (!r)
		r = cmp_i64(a->mem, b->mem);
	if (!r)
		r = cmp_i64(a->ngpus, b->ngpus);
	if (!r)
		r = cmp_i64(a->milli, b->milli);
	if (!r)
		r = cmp_i64(a->spec, b->spec);
	return r;
}

static struct rclass class_of(const struct gf_req *r)
{
	return (struct rclass){ r->cpu, r->mem, r->ngpus,
				r->gpu_milli >= GF_GPU_MILLI ? GF_GPU_MILLI
							     : r->gpu_milli,
				r->spec };
}

/* A request's class key beside its index, for sorting. */
struct keyed {
	struct rclass k;
	int idx;
};

static int cmp_keyed(const void *pa, const void *pb)
{
	const struct keyed *a = pa, *b = pb;
	int r = cmp_class(&a->k, &b->k);
	return r ? r : (a->idx > b->idx) - (a->idx < b->idx);
}

/* GPU milli a request of class c takes from the nodes when placed. */
static int64_t takes(const struct rclass *c)
{
	return (int64_t)c->ngpus * c->milli;
}

static void build_classes(struct gf_bound *b)
{
	const struct gf_workload *w = b->w;
	struct keyed *ks = gf_calloc((size_t)w->n + 1, sizeof(*ks));
	int m = 0;
	for (int i = 0; i < w->n; i++) {
		b->cls_of[i] = -1;
		if (w->reqs[i].ngpus > 0 && w->reqs[i].gpu_milli > 0)
			ks[m++] = (struct keyed){ class_of(&w->reqs[i]), i };
	}
	qsort(ks, (size_t)m, sizeof(*ks), cmp_keyed);
	b->c = gf_calloc((size_t)m + 1, sizeof(*b->c));
	for (int j = 0; j < m; j++) {
		if (b->nc == 0 || cmp_class(&b->c[b->nc - 1], &ks[j].k) != 0)
			b->c[b->nc++] = ks[j].k;
		b->cls_of[ks[j].idx] = b->nc - 1;
	}
	gf_free(ks);
	bool seen[GF_GPU_MILLI] = { false };
	b->share_of = gf_calloc((size_t)b->nc + 1, sizeof(*b->share_of));
	for (int ci = 0; ci < b->nc; ci++)
		if (b->c[ci].milli < GF_GPU_MILLI)
			seen[b->c[ci].milli] = true;
	int index[GF_GPU_MILLI];
	for (int h = 0; h < GF_GPU_MILLI; h++)
		index[h] = -1; /* no share of h milli (0: none has a GPU) */
	for (int h = 1; h < GF_GPU_MILLI; h++)
		if (seen[h]) {
			index[h] = b->nshare;
			b->share[b->nshare++] = h;
		}
	for (int ci = 0; ci < b->nc; ci++)
		b->share_of[ci] = b->c[ci].milli < GF_GPU_MILLI
					  ? index[b->c[ci].milli]
					  : -1;
}

static int cmp_type(const void *pa, const void *pb)
{
	const struct ntype *a = pa, *b = pb;
	int r = cmp_i64(a->cpu, b->cpu);
	if (!r)
		r = cmp_i64(a->mem, b->mem);
	if (!r)
		r = cmp_i64(a->ngpus, b->ngpus);
	if (!r)
		r = cmp_i64(a->model, b->model);
	return r;
}

static int build_types(struct gf_bound *b, const struct gf_cluster *c,
		       struct gf_err *e)
{
	b->t = gf_calloc((size_t)c->n + 1, sizeof(*b->t));
	int m = 0;
	for (int i = 0; i < c->n; i++) {
		const struct gf_cnode *n = &c->nodes[i];
		if (n->flags & GF_CNODE_CORDONED)
			continue; /* the engine gives it nothing */
		if (n->cpu_left != n->cpu_cap || n->mem_left != n->mem_cap ||
		    n->held_gpus || n->idle != n->ngpus * GF_GPU_MILLI)
			return gf_err_set(e, GF_EINVAL,
					  "node %d is not empty: the bound "
					  "starts from an empty cluster",
					  i);
		if (n->ngpus == 0)
			continue; /* no GPU request runs there */
		b->t[m++] = (struct ntype){ n->cpu_cap, n->mem_cap, n->ngpus,
					    n->model, 1 };
	}
	qsort(b->t, (size_t)m, sizeof(*b->t), cmp_type);
	for (int i = 0; i < m; i++) {
		if (b->nt > 0 && cmp_type(&b->t[b->nt - 1], &b->t[i]) == 0)
			b->t[b->nt - 1].count++;
		else
			b->t[b->nt++] = b->t[i];
	}
	return 0;
}

/* The copies of one request of c a node of t holds (0: it does not fit). */
static int64_t per_node(const struct rclass *c, const struct ntype *t)
{
	if (c->spec && !(c->spec & (UINT32_C(1) << t->model)))
		return 0;
	int64_t k = c->milli >= GF_GPU_MILLI
			    ? t->ngpus / c->ngpus
			    : (int64_t)t->ngpus * (GF_GPU_MILLI / c->milli);
	if (c->cpu > 0 && t->cpu / c->cpu < k)
		k = t->cpu / c->cpu;
	if (c->mem > 0 && t->mem / c->mem < k)
		k = t->mem / c->mem;
	return k;
}

/* u_k of a share of milli (a whole GPU: 1). */
static double dff(int milli, int k)
{
	if (milli >= GF_GPU_MILLI)
		return 1.0;
	int64_t s = (int64_t)(k + 1) * milli;
	if (s % GF_GPU_MILLI == 0)
		return (double)milli / GF_GPU_MILLI;
	return (double)(s / GF_GPU_MILLI) / k;
}

/*
 * The exact packing of shares into GPUs (Gilmore-Gomory, as lookahead.c
 * prices shares): per node type a row of its GPUs (whole GPUs taken plus
 * GPUs given a pattern of shares <= its GPUs) and per share a row (the
 * shares placed <= the copies the patterns hold).  Patterns are columns,
 * added while an unbounded knapsack finds one the prices break.
 */
static int pattern_base(const struct gf_bound *b, int ti)
{
	return b->nc + b->nt * TROWS + ti * (1 + b->nshare);
}

static void add_pattern(struct gf_bound *b, int ti, const int *count)
{
	int *ind = gf_calloc((size_t)b->nshare + 2, sizeof(*ind));
	double *val = gf_calloc((size_t)b->nshare + 2, sizeof(*val));
	int nz = 0, pbase = pattern_base(b, ti);
	ind[++nz] = pbase + 1;
	val[nz] = 1.0;
	for (int si = 0; si < b->nshare; si++)
		if (count[si] > 0) {
			ind[++nz] = pbase + 2 + si;
			val[nz] = -(double)count[si];
		}
	int col = glp_add_cols(b->lp, 1);
	glp_set_mat_col(b->lp, col, nz, ind, val);
	glp_set_col_bnds(b->lp, col, GLP_LO, 0.0, 0.0);
	gf_free(ind);
	gf_free(val);
}

/*
 * The best pattern of type ti at the prices of its share rows: its
 * value, and (count not NULL) the pattern.  An unbounded knapsack over
 * one GPU's milli.
 */
static double best_pattern(const struct gf_bound *b, int ti, int *count)
{
	double best[GF_GPU_MILLI + 1];
	int arg[GF_GPU_MILLI + 1];
	double price[GF_GPU_MILLI];
	int pbase = pattern_base(b, ti);
	for (int si = 0; si < b->nshare; si++) {
		double y = glp_get_row_dual(b->lp, pbase + 2 + si);
		price[si] = y > 0 ? y : 0;
	}
	best[0] = 0;
	arg[0] = -1;
	for (int h = 1; h <= GF_GPU_MILLI; h++) {
		best[h] = best[h - 1];
		arg[h] = -2; /* as h - 1 */
		for (int si = 0; si < b->nshare; si++)
			if (b->share[si] <= h &&
			    best[h - b->share[si]] + price[si] > best[h]) {
				best[h] = best[h - b->share[si]] + price[si];
				arg[h] = si;
			}
	}
	if (count) {
		memset(count, 0, (size_t)b->nshare * sizeof(*count));
		for (int h = GF_GPU_MILLI; h > 0 && arg[h] != -1;) {
			if (arg[h] == -2) {
				h--;
				continue;
			}
			count[arg[h]]++;
			h -= b->share[arg[h]];
		}
	}
	return best[GF_GPU_MILLI];
}

static void add_column(struct gf_bound *b, int ci, int ti, int64_t copies)
{
	const struct rclass *c = &b->c[ci];
	const struct ntype *t = &b->t[ti];
	int col = glp_add_cols(b->lp, 1);
	int ind[5 + TROWS];
	double val[5 + TROWS];
	int nz = 0, base = b->nc + ti * TROWS;
	double gpus = c->milli >= GF_GPU_MILLI ? c->ngpus : 1;
	ind[++nz] = ci + 1;
	val[nz] = 1.0;
	ind[++nz] = base + 1;
	val[nz] = (double)c->cpu;
	ind[++nz] = base + 2;
	val[nz] = (double)c->mem;
	ind[++nz] = base + 3;
	val[nz] = (double)takes(c);
	for (int k = 1; k <= NDFF; k++) {
		ind[++nz] = base + 3 + k;
		val[nz] = gpus * dff(c->milli, k);
	}
	/* whole GPUs in the type's GPU row, a share in its share's row */
	int pbase = pattern_base(b, ti);
	ind[++nz] =
		b->share_of[ci] < 0 ? pbase + 1 : pbase + 2 + b->share_of[ci];
	val[nz] = b->share_of[ci] < 0 ? c->ngpus : 1.0;
	glp_set_mat_col(b->lp, col, nz, ind, val);
	glp_set_col_bnds(b->lp, col, GLP_DB, 0.0,
			 (double)copies * (double)t->count);
	glp_set_obj_coef(b->lp, col, (double)takes(c));
}

static void build_program(struct gf_bound *b)
{
	b->lp = glp_create_prob();
	glp_set_obj_dir(b->lp, GLP_MAX);
	glp_add_rows(b->lp, b->nc + b->nt * (TROWS + 1 + b->nshare));
	for (int ci = 0; ci < b->nc; ci++)
		glp_set_row_bnds(b->lp, ci + 1, GLP_UP, 0.0, 0.0);
	for (int ti = 0; ti < b->nt; ti++) {
		const struct ntype *t = &b->t[ti];
		int base = b->nc + ti * TROWS;
		double n = t->count;
		glp_set_row_bnds(b->lp, base + 1, GLP_UP, 0.0, n * t->cpu);
		glp_set_row_bnds(b->lp, base + 2, GLP_UP, 0.0,
				 n * (double)t->mem);
		glp_set_row_bnds(b->lp, base + 3, GLP_UP, 0.0,
				 n * t->ngpus * GF_GPU_MILLI);
		for (int k = 1; k <= NDFF; k++)
			glp_set_row_bnds(b->lp, base + 3 + k, GLP_UP, 0.0,
					 n * t->ngpus);
		int pbase = pattern_base(b, ti);
		glp_set_row_bnds(b->lp, pbase + 1, GLP_UP, 0.0, n * t->ngpus);
		for (int si = 0; si < b->nshare; si++) {
			glp_set_row_bnds(b->lp, pbase + 2 + si, GLP_UP, 0.0,
					 0.0);
			int count[GF_GPU_MILLI] = { 0 };
			count[si] = GF_GPU_MILLI / b->share[si];
			add_pattern(b, ti, count);
		}
	}
	for (int ci = 0; ci < b->nc; ci++)
		for (int ti = 0; ti < b->nt; ti++) {
			int64_t k = per_node(&b->c[ci], &b->t[ti]);
			if (k > 0)
				add_column(b, ci, ti, k);
		}
	int term = glp_term_out(GLP_OFF); /* scaling writes to stdout */
	glp_scale_prob(b->lp, GLP_SF_AUTO);
	(void)glp_term_out(term);
}

int gf_bound_new(const struct gf_cluster *c, const struct gf_workload *w,
		 struct gf_bound **out, struct gf_err *e)
{
	*out = NULL;
	if (c->gpu_milli_total <= 0)
		return gf_err_set(e, GF_EINVAL, "the cluster has no GPU");
	if (w->n <= 0)
		return gf_err_set(e, GF_EINVAL, "the workload is empty");
	int rc = gf_glpk_open(e);
	if (rc)
		return rc;
	struct gf_bound *b = gf_calloc(1, sizeof(*b));
	b->w = w;
	b->capacity = c->gpu_milli_total;
	b->rounds = CG_ROUNDS;
	rc = build_types(b, c, e);
	if (rc) {
		gf_bound_free(b);
		return rc;
	}
	b->cls_of = gf_calloc((size_t)w->n, sizeof(*b->cls_of));
	build_classes(b);
	b->arrived = gf_calloc((size_t)b->nc + 1, sizeof(*b->arrived));
	build_program(b);
	*out = b;
	return 0;
}

void gf_bound_free(struct gf_bound *b)
{
	if (!b)
		return;
	if (b->lp)
		glp_delete_prob(b->lp);
	gf_free(b->t);
	gf_free(b->c);
	gf_free(b->cls_of);
	gf_free(b->arrived);
	gf_free(b->share_of);
	gf_free(b);
}

void gf_bound_set_rounds(struct gf_bound *b, int rounds)
{
	b->rounds = rounds < 0 ? 0 : rounds;
}

void gf_bound_size(const struct gf_bound *b, int *ntypes, int *nclasses)
{
	*ntypes = b->nt;
	*nclasses = b->nc;
}

static int simplex(struct gf_bound *b, struct gf_err *e)
{
	glp_smcp parm;
	glp_init_smcp(&parm);
	parm.msg_lev = GLP_MSG_OFF;
	int rc = glp_simplex(b->lp, &parm);
	if (rc != 0 || glp_get_status(b->lp) != GLP_OPT) {
		/* once more from a fresh basis before giving up */
		glp_std_basis(b->lp);
		rc = glp_simplex(b->lp, &parm);
	}
	if (rc != 0 || glp_get_status(b->lp) != GLP_OPT)
		return gf_err_set(e, GF_ERANGE,
				  "the bound's linear program was not solved "
				  "(GLPK: simplex code %d, status %d)",
				  rc, glp_get_status(b->lp));
	return 0;
}

/*
 * The program's optimum for the arrived counts, patterns added until
 * none gains; past b->rounds, the optimum plus what the best patterns
 * could still add (each type's GPUs times its best reduced value: the
 * Lagrangian bound, still an upper bound).  GF_ERANGE on failure.
 */
static int solve(struct gf_bound *b, double *opt, struct gf_err *e)
{
	for (int ci = 0; ci < b->nc; ci++)
		glp_set_row_bnds(b->lp, ci + 1, GLP_UP, 0.0,
				 (double)b->arrived[ci]);
	int *count = gf_calloc((size_t)b->nshare + 1, sizeof(*count));
	int rc = 0;
	for (int round = 0;; round++) {
		rc = simplex(b, e);
		if (rc)
			break;
		*opt = glp_get_obj_val(b->lp);
		bool added = false;
		double gain = 0;
		for (int ti = 0; ti < b->nt && b->nshare > 0; ti++) {
			double mu = glp_get_row_dual(b->lp,
						     pattern_base(b, ti) + 1);
			double v =
				best_pattern(b, ti, count) - (mu > 0 ? mu : 0);
			if (v <= CG_EPS)
				continue;
			gain += v * b->t[ti].count * b->t[ti].ngpus;
			if (round < b->rounds) {
				add_pattern(b, ti, count);
				added = true;
			}
		}
		if (!added) {
			*opt += gain; /* 0 unless the rounds ran out */
			break;
		}
	}
	gf_free(count);
	return rc;
}

/* The fill.c rounding of an allocation, as its bin records it. */
static void record(struct gf_fill_result *res, int64_t arrived, double alloc,
		   int64_t capacity)
{
	double cap = (double)capacity;
	double pct = nearbyint((double)arrived / cap * 100.0);
	if (pct < 0 || pct >= GF_FILL_BINS)
		return;
	int bin = (int)pct;
	res->alloc_sum[bin] += nearbyint(alloc / cap * 100.0 * 100.0) / 100.0;
	res->count[bin]++;
}

static int bin_of(int64_t arrived, int64_t capacity)
{
	double pct = nearbyint((double)arrived / (double)capacity * 100.0);
	return pct < 0 || pct >= GF_FILL_BINS ? -1 : (int)pct;
}

/*
 * Arrivals lo..hi (one bin) with the program solved at the ends of at
 * most per_bin segments.  *upto: arrivals counted in b->arrived so far.
 */
static int bound_bin(struct gf_bound *b, const int *seq, const int64_t *cum,
		     int lo, int hi, int per_bin, int *upto,
		     struct gf_fill_result *res, int *lps, struct gf_err *e)
{
	int len = hi - lo + 1, segs = len < per_bin ? len : per_bin;
	int start = lo;
	for (int s = 0; s < segs; s++) {
		int end = lo +
			  (int)(((int64_t)(s + 1) * len + segs - 1) / segs) - 1;
		for (; *upto <= end; (*upto)++)
			if (b->cls_of[seq[*upto]] >= 0)
				b->arrived[b->cls_of[seq[*upto]]]++;
		double opt = 0;
		int rc = solve(b, &opt, e);
		if (rc)
			return rc;
		(*lps)++;
		double ub = opt + LP_SLACK * fabs(opt) + 1e-3;
		for (int i = start; i <= end; i++) {
			double v = (double)cum[i];
			v = v < ub ? v : ub;
			v = v < (double)b->capacity ? v : (double)b->capacity;
			record(res, cum[i], v, b->capacity);
		}
		start = end + 1;
	}
	return 0;
}

int gf_bound_run(struct gf_bound *b, const struct gf_fill_opts *o,
		 const int *points, int npoints, int per_bin,
		 struct gf_fill_result *res, int *lps, struct gf_err *e)
{
	int *seq;
	int n = gf_fill_arrivals(b->w, b->capacity, o, &seq);
	int64_t *cum = gf_calloc((size_t)n + 1, sizeof(*cum));
	int64_t total = 0;
	for (int i = 0; i < n; i++) {
		const struct gf_req *r = &b->w->reqs[seq[i]];
		total += (int64_t)r->ngpus * r->gpu_milli; /* as fill.c */
		cum[i] = total;
	}
	/* the bins gf_fill_value reads at the points: the point's own, or
	 * its neighbours when it has no arrival */
	int count[GF_FILL_BINS] = { 0 };
	for (int i = 0; i < n; i++)
		if (bin_of(cum[i], b->capacity) >= 0)
			count[bin_of(cum[i], b->capacity)]++;
	bool need[GF_FILL_BINS] = { false };
	for (int p = 0; p < npoints; p++) {
		int pt = points[p];
		if (pt < 0 || pt >= GF_FILL_BINS)
			continue;
		need[pt] = true;
		if (count[pt] == 0) {
			if (pt > 0)
				need[pt - 1] = true;
			if (pt + 1 < GF_FILL_BINS)
				need[pt + 1] = true;
		}
	}
	memset(res, 0, sizeof(*res));
	memset(b->arrived, 0, (size_t)b->nc * sizeof(*b->arrived));
	res->arrivals = n;
	res->arrived_milli = total;
	if (per_bin < 1)
		per_bin = 1;
	int upto = 0, rc = 0;
	for (int i = 0; i < n && rc == 0;) {
		int bin = bin_of(cum[i], b->capacity), j = i;
		while (j + 1 < n && bin_of(cum[j + 1], b->capacity) == bin)
			j++;
		if (bin >= 0 && need[bin]) {
			rc = bound_bin(b, seq, cum, i, j, per_bin, &upto, res,
				       lps, e);
		} else {
			for (int k = i; k <= j; k++) {
				double v = (double)cum[k];
				double cap = (double)b->capacity;
				record(res, cum[k], v < cap ? v : cap,
				       b->capacity);
			}
		}
		i = j + 1;
	}
	gf_free(cum);
	gf_free(seq);
	return rc;
}
