/*
 * mig_plan.c - the MIG planner: integer programs over layout patterns
 * (mig_groups.c makes the groups and patterns and realises the plan).
 *
 * GPUs with the same model and the same busy instances form a group
 * (their idle instances matter only for counting changes).  A pattern is
 * a multiset of instances some valid layout of the model can hold while
 * keeping the group's busy instances where they are.  Variables: x[g][c],
 * how many GPUs of group g take pattern c; y[d][m], instances of demand d
 * served by model m; z[g][c], GPUs of g that take c and already hold
 * exactly c (so stay unchanged).  Rows: each group's GPUs take one pattern
 * each; y is bounded by the supply of the chosen patterns and, over
 * models, by the demand; z by x and by how many GPUs hold c now; and, per
 * model and profile, the idle instances on changed GPUs (x - z) by the
 * instances served (y): a changed GPU holds its busy instances and what
 * serves the demand, nothing more, so a plan never creates an instance
 * nobody asked for.  (Without that row the solver was free to pad a GPU
 * it used anyway: 2g.20gb=1 became three.)
 *
 * The objectives are lexicographic: the most served units (per demand,
 * gf_mig_profile_units of its name: the same wherever it lands; counting
 * memory slices of the GPU it lands on rewarded landing a 1g.10gb on an
 * A100 40GB, where it takes two), then the fewest GPUs used, then the
 * most GPUs unchanged.  They are solved as three integer programs, each
 * keeping the optimum of the one before as a constraint; one weighted
 * objective makes the relaxation weak and GLPK slow.  Patterns are
 * limited to demanded profiles and what the GPUs hold now, which keeps
 * each group to at most a few hundred columns.
 *
 * Options for a running fleet (gf_mig_propose): a demand limited to one
 * model has y[d][m] fixed at 0 on the others, and the supply rows are per
 * profile name and model, so demands that name one profile share its
 * instances; a demand may have a lower bound (serve at least what it is
 * served now); and the fewest GPUs changed may come before the fewest
 * used.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/mig_plan.h>

#include "core/mig/mig_plan_impl.h"
#include "util/glpk_lib.h"
#include "util/mem.h"

struct lp {
	glp_prob *p;
	int *ia, *ja;
	double *ar;
	int nz, cap;
};

static void nz(struct lp *lp, int row, int col, double v)
{
	if (lp->nz + 1 >= lp->cap) {
		lp->cap = lp->cap ? lp->cap * 2 : 1024;
		lp->ia = gf_reallocarray(lp->ia, (size_t)lp->cap, sizeof(int));
		lp->ja = gf_reallocarray(lp->ja, (size_t)lp->cap, sizeof(int));
		lp->ar = gf_reallocarray(lp->ar, (size_t)lp->cap,
					 sizeof(double));
	}
	lp->nz++;
	lp->ia[lp->nz] = row;
	lp->ja[lp->nz] = col;
	lp->ar[lp->nz] = v;
}

/*
 * Every objective here takes integer values only, which GLPK does not
 * know: stop as soon as the incumbent equals the best bound rounded to an
 * integer (the search is then finished: that is a proof of optimality).
 */
struct cb_state {
	bool maximise;
	bool proved;
	double bound; /* best bound seen, for a search cut short */
	bool have_bound;
};

static void on_tree(glp_tree *t, void *arg)
{
	struct cb_state *cb = arg;
	/* at selection every open subproblem is in the active list, so the
	 * best node's bound bounds them all */
	if (glp_ios_reason(t) != GLP_ISELECT)
		return;
	glp_prob *P = glp_ios_get_prob(t);
	int best = glp_ios_best_node(t);
	if (best == 0 || glp_mip_status(P) != GLP_FEAS)
		return;
	double bound = glp_ios_node_bound(t, best);
	double inc = glp_mip_obj_val(P);
	cb->bound = bound;
	cb->have_bound = true;
	bool done = cb->maximise ? floor(bound + 1e-6) <= inc + 1e-6
				 : ceil(bound - 1e-6) >= inc - 1e-6;
	if (done) {
		cb->proved = true;
		glp_ios_terminate(t);
	}
}

static double now_ms(const struct gf_mig_plan_opts *o)
{
	return o && o->clock_ms ? o->clock_ms() : 0.0;
}

int gf_mig_plan(const struct gf_mig_gpu *gpus, int ngpus,
		const struct gf_mig_demand *d, int nd, struct gf_mig_plan *p,
		struct gf_err *e)
{
	return gf_mig_plan_with(gpus, ngpus, d, nd, NULL, p, e);
}

/* One planning run: the inputs, the groups, the program and its columns. */
struct planner {
	const struct gf_mig_gpu *gpus;
	int ngpus;
	const struct gf_mig_demand *d;
	int nd;
	const struct gf_mig_plan_opts *o;
	struct gf_mig_plan *p;
	struct group *g;
	int ng;
	const struct gf_mig_model *models[32]; /* distinct: < model table */
	int nm;
	int dmem[GF_MIG_MAX_DEMANDS]; /* slices of demand k at its largest */
	struct lp lp;
	int ycol0;   /* first column of y[k][m] */
	double *sol; /* the last stage's solution, by column */
};

static int check_gpus(const struct gf_mig_gpu *gpus, int ngpus, int nd,
		      struct gf_err *e)
{
	if (ngpus <= 0 || ngpus > GF_MIG_MAX_GPUS)
		return gf_err_set(e, GF_EINVAL, "%d GPUs: expected 1 to %d",
				  ngpus, GF_MIG_MAX_GPUS);
	if (nd < 0 || nd > GF_MIG_MAX_DEMANDS)
		return gf_err_set(e, GF_EINVAL, "%d demands: expected 0 to %d",
				  nd, GF_MIG_MAX_DEMANDS);
	for (int i = 0; i < ngpus; i++) {
		char msg[160];
		if (gpus[i].model == NULL)
			return gf_err_set(e, GF_EINVAL, "GPU %d: no MIG model",
					  i);
		if (gf_mig_layout_check(gpus[i].model, &gpus[i].current, msg,
					sizeof(msg)) != 0)
			return gf_err_set(e, GF_EINVAL,
					  "GPU %d: current layout: %s", i, msg);
	}
	return 0;
}

/* Every demand names a profile some GPU of the fleet has. */
static int check_demands(struct planner *P, struct gf_err *e)
{
	for (int k = 0; k < P->nd; k++) {
		const struct gf_mig_demand *d = &P->d[k];
		if (d->count < 0)
			return gf_err_set(e, GF_EINVAL,
					  "demand '%s': negative count",
					  d->profile);
		int lo = P->o && P->o->demand_min ? P->o->demand_min[k] : 0;
		if (lo < 0 || lo > d->count)
			return gf_err_set(e, GF_EINVAL,
					  "demand '%s': at least %d of %d to "
					  "serve",
					  d->profile, lo, d->count);
		const struct gf_mig_model *only =
			P->o && P->o->demand_model ? P->o->demand_model[k]
						   : NULL;
		if (!gf__mig_find_demand_mem(P->g, P->ng, d, only,
					     &P->dmem[k])) {
			const struct gf_mig_model *fm[32];
			int nfm = gf__mig_fleet_models(P->g, P->ng, fm);
			char list[200] = "";
			size_t len = 0;
			for (int m = 0; m < nfm && len + 24 < sizeof(list); m++)
				len += (size_t)snprintf(
					list + len, sizeof(list) - len, "%s%s",
					m ? ", " : "", fm[m]->id);
			return gf_err_set(e, GF_EINVAL,
					  "no GPU of this fleet has profile "
					  "'%s'%s%s (models: %s)",
					  d->profile, only ? " on a " : "",
					  only ? only->id : "", list);
		}
		P->p->units[k] = gf_mig_profile_units(d->profile);
	}
	return 0;
}

/* x[g][c] per group and pattern, y[k][m] per demand and model, z[g][c]
 * for the patterns some GPU holds now. */
static void add_columns(struct planner *P)
{
	struct group *g = P->g;
	glp_prob *lp = P->lp.p;
	int ncol = 0;
	for (int i = 0; i < P->ng; i++) {
		g[i].col0 = ncol + 1;
		glp_add_cols(lp, g[i].npat);
		for (int c = 0; c < g[i].npat; c++) {
			int col = g[i].col0 + c;
			glp_set_col_kind(lp, col, GLP_IV);
			glp_set_col_bnds(lp, col, GLP_DB, 0, g[i].n);
		}
		ncol += g[i].npat;
	}
	/* y[k][m]: integer, as the rows below mix it with x and z */
	P->ycol0 = ncol + 1;
	if (P->nd * P->nm > 0) /* GLPK aborts on zero columns */
		glp_add_cols(lp, P->nd * P->nm);
	for (int k = 0; k < P->nd; k++)
		for (int m = 0; m < P->nm; m++) {
			int col = P->ycol0 + k * P->nm + m;
			int pi = gf_mig_profile_find(P->models[m],
						     P->d[k].profile);
			glp_set_col_kind(lp, col, GLP_IV);
			/* GLPK wants GLP_FX, not GLP_DB, for equal bounds */
			bool open = pi >= 0 && P->d[k].count > 0 &&
				    gf__mig_demand_on(P->o, k, P->models[m]);
			glp_set_col_bnds(lp, col, open ? GLP_DB : GLP_FX, 0,
					 open ? P->d[k].count : 0);
		}
	for (int i = 0; i < P->ng; i++)
		for (int c = 0; c < g[i].npat; c++) {
			if (g[i].pat[c].holders == 0)
				continue;
			int col = glp_add_cols(lp, 1);
			g[i].pat[c].zcol = col;
			glp_set_col_kind(lp, col, GLP_IV);
			glp_set_col_bnds(lp, col, GLP_DB, 0,
					 g[i].pat[c].holders);
		}
}

/* The first demand that names the same profile as demand k. */
static int first_of_name(const struct planner *P, int k)
{
	int j = 0;
	while (strcmp(P->d[j].profile, P->d[k].profile) != 0)
		j++;
	return j;
}

/* Row `row`: the instances of demand k's profile served on model m, by
 * every demand that names it, are at most the chosen patterns hold. */
static void supply_row(struct planner *P, int k, int m, int row)
{
	const struct group *g = P->g;
	glp_set_row_bnds(P->lp.p, row, GLP_UP, 0, 0);
	for (int j = k; j < P->nd; j++)
		if (first_of_name(P, j) == k)
			nz(&P->lp, row, P->ycol0 + j * P->nm + m, 1.0);
	for (int i = 0; i < P->ng; i++) {
		if (g[i].m != P->models[m])
			continue;
		int pi = gf_mig_profile_find(g[i].m, P->d[k].profile);
		if (pi < 0)
			continue;
		for (int c = 0; c < g[i].npat; c++)
			if (g[i].pat[c].counts[pi])
				nz(&P->lp, row, g[i].col0 + c,
				   -(double)g[i].pat[c].counts[pi]);
	}
}

/* Rows: each group's GPUs take one pattern each; y bounded by the
 * supply of the chosen patterns (per profile name and model, shared by
 * the demands that name it) and by the demand; z <= x. */
static void add_supply_rows(struct planner *P)
{
	struct group *g = P->g;
	int nm = P->nm, nnames = 0;
	for (int k = 0; k < P->nd; k++)
		nnames += first_of_name(P, k) == k;
	int row = glp_add_rows(P->lp.p, P->ng + nnames * nm + P->nd);
	for (int i = 0; i < P->ng; i++, row++) {
		glp_set_row_bnds(P->lp.p, row, GLP_FX, g[i].n, g[i].n);
		for (int c = 0; c < g[i].npat; c++)
			nz(&P->lp, row, g[i].col0 + c, 1.0);
	}
	for (int k = 0; k < P->nd; k++) {
		if (first_of_name(P, k) != k)
			continue; /* its name's rows are the first's */
		for (int m = 0; m < nm; m++, row++)
			supply_row(P, k, m, row);
	}
	for (int k = 0; k < P->nd; k++, row++) {
		int lo = P->o && P->o->demand_min ? P->o->demand_min[k] : 0;
		int hi = P->d[k].count;
		/* GLPK wants GLP_FX, not GLP_DB, for equal bounds */
		glp_set_row_bnds(P->lp.p, row,
				 lo == hi ? GLP_FX
				 : lo > 0 ? GLP_DB
					  : GLP_UP,
				 lo, hi);
		for (int m = 0; m < nm; m++)
			nz(&P->lp, row, P->ycol0 + k * nm + m, 1.0);
	}
	for (int i = 0; i < P->ng; i++)
		for (int c = 0; c < g[i].npat; c++) {
			if (!g[i].pat[c].zcol)
				continue;
			int r = glp_add_rows(P->lp.p, 1);
			glp_set_row_bnds(P->lp.p, r, GLP_UP, 0, 0);
			nz(&P->lp, r, g[i].pat[c].zcol, 1.0);
			nz(&P->lp, r, g[i].col0 + c, -1.0);
		}
}

/* No surplus: per model and profile, the idle instances on changed GPUs,
 * sum (counts - busy) * (x - z), are at most those served. */
static void add_surplus_rows(struct planner *P)
{
	struct group *g = P->g;
	for (int m = 0; m < P->nm; m++)
		for (int pi = 0; pi < P->models[m]->nprofiles; pi++) {
			int r = 0;
			for (int i = 0; i < P->ng; i++) {
				if (g[i].m != P->models[m])
					continue;
				int busy = gf__mig_busy_count(&g[i], pi);
				for (int c = 0; c < g[i].npat; c++) {
					int idle =
						g[i].pat[c].counts[pi] - busy;
					if (idle <= 0)
						continue;
					if (!r) {
						r = glp_add_rows(P->lp.p, 1);
						glp_set_row_bnds(P->lp.p, r,
								 GLP_UP, 0, 0);
					}
					nz(&P->lp, r, g[i].col0 + c, idle);
					if (g[i].pat[c].zcol)
						nz(&P->lp, r, g[i].pat[c].zcol,
						   -idle);
				}
			}
			if (!r)
				continue;
			for (int k = 0; k < P->nd; k++)
				if (!strcmp(P->models[m]->profiles[pi].name,
					    P->d[k].profile))
					nz(&P->lp, r, P->ycol0 + k * P->nm + m,
					   -1.0);
		}
}

/* The objectives, indexes of proved[] and stage_ms[]. */
enum { OBJ_SERVED, OBJ_GPUS, OBJ_KEPT };

/* The order they are solved in: the GPUs used before the GPUs kept, or,
 * with opts.fewest_changes, after. */
static const int obj_order[2][3] = { { OBJ_SERVED, OBJ_GPUS, OBJ_KEPT },
				     { OBJ_SERVED, OBJ_KEPT, OBJ_GPUS } };

/* Max served units; min GPUs used; max GPUs kept as they are. */
static void set_objective(struct planner *P, int obj)
{
	glp_prob *lp = P->lp.p;
	struct group *g = P->g;
	for (int c = 1, n = glp_get_num_cols(lp); c <= n; c++)
		glp_set_obj_coef(lp, c, 0);
	glp_set_obj_dir(lp, obj == OBJ_GPUS ? GLP_MIN : GLP_MAX);
	for (int i = 0; i < P->ng; i++)
		for (int c = 0; c < g[i].npat; c++) {
			if (obj == OBJ_GPUS && g[i].pat[c].ninst > 0)
				glp_set_obj_coef(lp, g[i].col0 + c, 1);
			if (obj == OBJ_KEPT && g[i].pat[c].zcol)
				glp_set_obj_coef(lp, g[i].pat[c].zcol, 1);
		}
	if (obj != OBJ_SERVED)
		return;
	for (int k = 0; k < P->nd; k++)
		for (int m = 0; m < P->nm; m++)
			if (gf_mig_profile_find(P->models[m],
						P->d[k].profile) >= 0)
				glp_set_obj_coef(lp, P->ycol0 + k * P->nm + m,
						 P->p->units[k]);
}

/* Keep an objective's optimum as a constraint for the next ones. */
static void fix_stage(struct planner *P, int obj, double best)
{
	glp_prob *lp = P->lp.p;
	int ntot = glp_get_num_cols(lp), n = 0;
	int *idx = gf_calloc((size_t)ntot + 1, sizeof(int));
	double *coef = gf_calloc((size_t)ntot + 1, sizeof(double));
	for (int c = 1; c <= ntot; c++) {
		double v = glp_get_obj_coef(lp, c);
		if (v != 0) {
			idx[++n] = c;
			coef[n] = v;
		}
	}
	if (n > 0) {
		int r = glp_add_rows(lp, 1);
		glp_set_mat_row(lp, r, n, idx, coef);
		if (obj != OBJ_GPUS) /* served or kept >= the best */
			glp_set_row_bnds(lp, r, GLP_LO, best - 0.5, 0);
		else /* GPUs used <= the fewest */
			glp_set_row_bnds(lp, r, GLP_UP, 0, best + 0.5);
	}
	gf_free(idx);
	gf_free(coef);
}

/*
 * Lexicographic, in three solves: each fixes the optimum of the last as a
 * constraint.  Far faster than one weighted objective, whose weights make
 * the relaxation weak.  Each stage keeps the best solution found if its
 * time runs out.  Leaves the answer in P->sol.
 */
static int solve(struct planner *P, struct gf_err *e)
{
	struct gf_mig_plan *p = P->p;
	glp_prob *lp = P->lp.p;
	int ntot = glp_get_num_cols(lp);
	P->sol = gf_calloc((size_t)ntot + 1, sizeof(double));
	bool have = false;
	p->optimal = true;
	const int *order = obj_order[P->o && P->o->fewest_changes];
	for (int stage = 0; stage < 3; stage++) {
		int obj = order[stage];
		double ts = now_ms(P->o);
		set_objective(P, obj);
		struct cb_state cb = { obj != OBJ_GPUS, false, 0, false };
		glp_iocp io;
		glp_init_iocp(&io);
		io.msg_lev = GLP_MSG_OFF;
		io.presolve = GLP_ON;
		io.mir_cuts = GLP_ON;
		io.cb_func = on_tree;
		io.cb_info = &cb;
		io.tm_lim = stage == 0 ? 4000 : 2500;
		int sr = glp_intopt(lp, &io);
		int st = glp_mip_status(lp);
		p->stage_ms[obj] = now_ms(P->o) - ts;
		if (sr == GLP_ESTOP && cb.proved && st == GLP_FEAS)
			st = GLP_OPT, sr = 0; /* stopped on a proof */
		if ((sr != 0 && sr != GLP_ETMLIM) ||
		    (st != GLP_OPT && st != GLP_FEAS)) {
			if (!have)
				return gf_err_set(e, GF_ENOTSUP,
						  "MIG planner: the solver "
						  "found no solution (GLPK "
						  "status %d, code %d)",
						  st, sr);
			p->optimal = false;
			break; /* keep the previous stage's answer */
		}
		if (st != GLP_OPT)
			p->optimal = false;
		p->proved[obj] = st == GLP_OPT;
		if (obj == OBJ_GPUS)
			p->bound_gpus = st == GLP_OPT	? glp_mip_obj_val(lp)
					: cb.have_bound ? ceil(cb.bound - 1e-6)
							: 0;
		for (int c = 1; c <= ntot; c++)
			P->sol[c] = glp_mip_col_val(lp, c);
		have = true;
		if (stage < 2)
			fix_stage(P, obj, glp_mip_obj_val(lp));
	}
	return 0;
}

/* Per-GPU plans of group i: GPUs that can keep their layout do so first;
 * used patterns go to the lowest free indexes, empty ones last. */
static void assign_group(struct planner *P, const struct group *g)
{
	bool *done = gf_calloc((size_t)g->n, sizeof(*done));
	int *left = gf_calloc((size_t)g->npat, sizeof(*left));
	for (int c = 0; c < g->npat; c++) {
		left[c] = (int)lround(P->sol[g->col0 + c]);
		int keep = g->pat[c].zcol ? (int)lround(P->sol[g->pat[c].zcol])
					  : 0;
		/* free GPUs stay free from the top index down */
		bool up = g->pat[c].ninst > 0;
		for (int t = 0; t < g->n && keep > 0; t++) {
			int k = up ? t : g->n - 1 - t;
			if (!done[k] && g->curpat[k] == c) {
				int gi = g->gpus[k];
				gf__mig_realise(g, &P->gpus[gi], &g->pat[c],
						true, &P->p->gpus[gi]);
				done[k] = true;
				keep--;
				left[c]--;
			}
		}
	}
	for (int pass = 0; pass < 2; pass++)
		for (int c = 0; c < g->npat; c++) {
			if ((g->pat[c].ninst > 0) != (pass == 0))
				continue;
			for (int k = 0; k < g->n && left[c] > 0; k++) {
				if (done[k])
					continue;
				int gi = g->gpus[k];
				gf__mig_realise(g, &P->gpus[gi], &g->pat[c],
						g->curpat[k] == c,
						&P->p->gpus[gi]);
				done[k] = true;
				left[c]--;
			}
		}
	gf_free(done);
	gf_free(left);
}

/* Instances of profile `name` the plan's layouts hold on model m. */
static long supply_of(const struct planner *P, const struct gf_mig_model *m,
		      const char *name)
{
	long n = 0;
	for (int i = 0; i < P->ngpus; i++) {
		const struct gf_mig_layout *l = &P->p->gpus[i].layout;
		if (P->gpus[i].model != m)
			continue;
		for (int j = 0; j < l->n; j++)
			n += !strcmp(m->profiles[l->inst[j].profile].name,
				     name);
	}
	return n;
}

/* Demand j takes what it can of supply[] (instances of its profile per
 * model), the larger ones first, on the models it may use. */
static void take_supply(struct planner *P, int j, long *supply)
{
	struct gf_mig_plan *p = P->p;
	long want = P->d[j].count;
	while (want > 0) {
		int bm = -1, bmem = -1;
		for (int m = 0; m < P->nm; m++) {
			int pi = gf_mig_profile_find(P->models[m],
						     P->d[j].profile);
			if (pi >= 0 && supply[m] > 0 &&
			    gf__mig_demand_on(P->o, j, P->models[m]) &&
			    P->models[m]->profiles[pi].mem > bmem) {
				bm = m;
				bmem = P->models[m]->profiles[pi].mem;
			}
		}
		if (bm < 0)
			break;
		long take = supply[bm] < want ? supply[bm] : want;
		p->served[j] += (int)take;
		p->served_slices += take * bmem;
		want -= take;
		supply[bm] -= take;
	}
}

/* Totals, from the layouts themselves: per profile name, the instances
 * of that name on each model, shared by the demands that name it: those
 * limited to one model first, then the others, the larger instances
 * first (for served_slices; served instances and units do not depend on
 * it). */
static void count_served(struct planner *P)
{
	struct gf_mig_plan *p = P->p;
	p->ndemands = P->nd;
	for (int k = 0; k < P->nd; k++) {
		if (first_of_name(P, k) != k)
			continue;
		long supply[32] = { 0 };
		for (int m = 0; m < P->nm; m++)
			supply[m] = supply_of(P, P->models[m], P->d[k].profile);
		for (int pass = 0; pass < 2; pass++)
			for (int j = k; j < P->nd; j++) {
				bool limited = P->o && P->o->demand_model &&
					       P->o->demand_model[j];
				if (first_of_name(P, j) == k &&
				    limited == (pass == 0))
					take_supply(P, j, supply);
			}
	}
	for (int k = 0; k < P->nd; k++) {
		p->unserved[k] = P->d[k].count - p->served[k];
		p->served_units += (long)p->served[k] * p->units[k];
		p->demand_units += (long)P->d[k].count * p->units[k];
		p->demand_slices += (long)P->d[k].count * P->dmem[k];
	}
}

/* --fill: the free room of each used GPU, with more of the demanded
 * profiles; what serves unmet demand counts as served. */
static void fill_used(struct planner *P)
{
	struct gf_mig_plan *p = P->p;
	p->fill = true;
	for (int i = 0; i < P->ngpus; i++) {
		struct gf_mig_gpu_plan *gp = &p->gpus[i];
		if (!gp->used)
			continue;
		gf__mig_fill_gpu(&P->gpus[i], P->d, P->nd, P->o, gp);
		for (int j = 0; j < gp->nfill; j++) {
			const struct gf_mig_model *m = P->gpus[i].model;
			const char *name =
				m->profiles[gp->fill[j].profile].name;
			int kk = -1; /* the demand it counts for */
			for (int k = 0; k < P->nd; k++)
				if (!strcmp(name, P->d[k].profile) &&
				    gf__mig_demand_on(P->o, k, m) &&
				    (kk < 0 || (p->unserved[kk] == 0 &&
						p->unserved[k] > 0)))
					kk = k;
			if (kk < 0)
				continue;
			/* only a plan cut short by its time limit leaves
			 * room for the demand */
			if (p->unserved[kk] > 0) {
				p->unserved[kk]--;
				p->served[kk]++;
				p->served_units += p->units[kk];
			} else {
				p->filled[kk]++;
			}
		}
	}
}

/* Build the program (columns, rows) and its LP bound. */
static void build_program(struct planner *P)
{
	glp_term_out(GLP_OFF);
	P->lp.p = glp_create_prob();
	glp_set_obj_dir(P->lp.p, GLP_MAX);
	add_columns(P);
	add_supply_rows(P);
	add_surplus_rows(P);
	glp_load_matrix(P->lp.p, P->lp.nz, P->lp.ia, P->lp.ja, P->lp.ar);
	P->p->ncols = glp_get_num_cols(P->lp.p);
	P->p->nrows = glp_get_num_rows(P->lp.p);
	/* the LP relaxation of served units: an upper bound */
	set_objective(P, OBJ_SERVED);
	glp_smcp sm;
	glp_init_smcp(&sm);
	sm.msg_lev = GLP_MSG_OFF;
	if (glp_simplex(P->lp.p, &sm) == 0 &&
	    glp_get_status(P->lp.p) == GLP_OPT)
		P->p->bound_units = glp_get_obj_val(P->lp.p);
}

int gf_mig_plan_with(const struct gf_mig_gpu *gpus, int ngpus,
		     const struct gf_mig_demand *d, int nd,
		     const struct gf_mig_plan_opts *o, struct gf_mig_plan *p,
		     struct gf_err *e)
{
	memset(p, 0, sizeof(*p));
	int rc = check_gpus(gpus, ngpus, nd, e);
	if (!rc)
		rc = gf_glpk_open(e);
	if (rc)
		return rc;
	struct planner P = {
		.gpus = gpus, .ngpus = ngpus, .d = d, .nd = nd, .o = o, .p = p
	};
	P.g = gf_calloc((size_t)ngpus, sizeof(*P.g));
	P.ng = gf__mig_group_gpus(gpus, ngpus, P.g);
	rc = check_demands(&P, e);
	if (rc)
		goto out;
	for (int i = 0; i < P.ng; i++) {
		gf__mig_build_patterns(&P.g[i], gpus, d, nd, o);
		p->npatterns += P.g[i].npat;
	}
	p->ngroups = P.ng;
	P.nm = gf__mig_fleet_models(P.g, P.ng, P.models);
	double t0 = now_ms(o);
	build_program(&P);
	rc = solve(&P, e);
	p->solve_ms = now_ms(o) - t0;
	if (rc)
		goto out;
	p->ngpus = ngpus;
	p->gpus = gf_calloc((size_t)ngpus, sizeof(*p->gpus));
	for (int i = 0; i < P.ng; i++)
		assign_group(&P, &P.g[i]);
	count_served(&P);
	if (o && o->fill)
		fill_used(&P);
	for (int i = 0; i < ngpus; i++) {
		p->used_gpus += p->gpus[i].used;
		p->changed_gpus += p->gpus[i].changed;
	}
out:
	gf_free(P.sol);
	gf_free(P.lp.ia);
	gf_free(P.lp.ja);
	gf_free(P.lp.ar);
	if (P.lp.p)
		glp_delete_prob(P.lp.p);
	for (int i = 0; i < P.ng; i++) {
		gf_free(P.g[i].gpus);
		gf_free(P.g[i].curpat);
		gf_free(P.g[i].pat);
	}
	gf_free(P.g);
	return rc;
}

void gf_mig_plan_release(struct gf_mig_plan *p)
{
	gf_free(p->gpus);
	p->ngpus = 0;
}
