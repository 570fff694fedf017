/*
 * test_mig.c - MIG rules, enumeration against the reference's exhaustive
 * tables, the H200 table against a real H200's recording, the planner
 * against an independent exhaustive search (one model and mixed fleets),
 * the mig-parted reader on NVIDIA's own files, and facts of the golden
 * files checked by hand (mig apply against the fake NVML: test_mig_apply.c).
 */
#include <errno.h>
#include <math.h>

#include <gpufleet/mig_plan.h>
#include <gpufleet/rng.h>

#include "helpers.h"
#include "mig/apply.h"
#include "mig/current.h"
#include "mig/migparted.h"
#include "mig/render.h"
#include "mig/state.h"
#include "sim/mig_sim.h"

/* A copy of a model without its +me (and optionally 1g.2x) profiles:
 * the reference tables enumerate classes, not media variants. */
static struct gf_mig_model strip(const char *id, bool drop_1g2x)
{
	struct gf_mig_model m = *gf_mig_model_by_id(id);
	int w = 0;
	for (int i = 0; i < m.nprofiles; i++)
		if (!m.profiles[i].me &&
		    !(drop_1g2x && m.profiles[i].cls == GF_MIG_1G2X))
			m.profiles[w++] = m.profiles[i];
	m.nprofiles = w;
	return m;
}

struct census {
	const struct gf_mig_model *m;
	int maximal;
	int nsets;
	int sets[512][GF_MIG_NCLASSES];
};

static int census_cb(const struct gf_mig_layout *l, void *arg)
{
	struct census *c = arg;
	const struct gf_mig_model *m = c->m;
	int cls[GF_MIG_NCLASSES] = { 0 }, cnt[GF_MIG_MAX_PROFILES] = { 0 };
	for (int i = 0; i < l->n; i++) {
		cls[m->profiles[l->inst[i].profile].cls]++;
		cnt[l->inst[i].profile]++;
	}
	int k;
	for (k = 0; k < c->nsets; k++)
		if (!memcmp(c->sets[k], cls, sizeof(cls)))
			break;
	if (k == c->nsets && c->nsets < 512)
		memcpy(c->sets[c->nsets++], cls, sizeof(cls));
	/* maximal: no further instance fits anywhere */
	struct gf_mig_layout t = *l;
	for (int p = 0; p < m->nprofiles; p++) {
		int add[GF_MIG_MAX_PROFILES] = { 0 };
		add[p] = 1;
		t = *l;
		if (gf_mig_place(m, add, &t) == 0)
			return 0;
	}
	c->maximal++;
	return 0;
}

static void test_enumeration_matches_reference(void **state)
{
	(void)state;
	static struct census c;
	struct gf_mig_model h = strip("h100-80gb", false);
	memset(&c, 0, sizeof(c));
	c.m = &h;
	assert_int_equal(gf_mig_enumerate(&h, census_cb, &c), 722);
	assert_int_equal(c.maximal, 78);
	assert_int_equal(c.nsets, 77);
	struct gf_mig_model old = strip("a100-40gb", true); /* before R525 */
	memset(&c, 0, sizeof(c));
	c.m = &old;
	assert_int_equal(gf_mig_enumerate(&old, census_cb, &c), 297);
	assert_int_equal(c.maximal, 19); /* "the 19 A100 combinations" */
	assert_int_equal(c.nsets, 37);
	struct gf_mig_model a30 = strip("a30", false);
	memset(&c, 0, sizeof(c));
	c.m = &a30;
	assert_int_equal(gf_mig_enumerate(&a30, census_cb, &c), 25);
	assert_int_equal(c.maximal, 5);
	assert_int_equal(c.nsets, 9);

	/* every multiset of the reference CSV is placeable, and no other */
	char path[512];
	shared_path(path, sizeof(path),
		    "reference/mig/valid-gi-multisets-8slot.csv");
	FILE *f = fopen(path, "r");
	if (!f) {
		print_message("shared data absent: %s\n", path);
		skip();
	}
	memset(&c, 0, sizeof(c));
	c.m = &h;
	gf_mig_enumerate(&h, census_cb, &c);
	char line[512];
	int rows = 0;
	assert_non_null(fgets(line, sizeof(line), f)); /* header */
	while (fgets(line, sizeof(line), f)) {
		int n7, n4, n3, n2, n1x2, n1;
		assert_int_equal(sscanf(line, "%d,%d,%d,%d,%d,%d", &n7, &n4,
					&n3, &n2, &n1x2, &n1),
				 6);
		int want[GF_MIG_NCLASSES] = { n1, n1x2, n2, n3, n4, n7 };
		bool found = false;
		for (int k = 0; k < c.nsets && !found; k++)
			found = !memcmp(c.sets[k], want, sizeof(want));
		assert_true(found);
		rows++;
	}
	fclose(f);
	assert_int_equal(rows, c.nsets);
}

static void test_layout_rules(void **state)
{
	(void)state;
	const struct gf_mig_model *h = gf_mig_model_by_id("h100-sxm");
	assert_non_null(h);
	assert_string_equal(h->id, "h100-80gb");
	int p3 = gf_mig_profile_find(h, "3g.40gb");
	int p1 = gf_mig_profile_find(h, "1g.10gb");
	int pme = gf_mig_profile_find(h, "1g.10gb+me");
	char msg[160];
	struct gf_mig_layout l = { 1, { { (uint8_t)p3, 2, false } } };
	assert_int_equal(gf_mig_layout_check(h, &l, msg, sizeof(msg)),
			 GF_EINVAL);
	assert_string_equal(msg,
			    "3g.40gb cannot start at slice 2 on h100-80gb");
	l = (struct gf_mig_layout){
		2, { { (uint8_t)p3, 4, false }, { (uint8_t)p1, 5, false } }
	};
	assert_int_equal(gf_mig_layout_check(h, &l, msg, sizeof(msg)),
			 GF_EINVAL);
	assert_non_null(strstr(msg, "overlaps"));
	l = (struct gf_mig_layout){
		2, { { (uint8_t)pme, 0, false }, { (uint8_t)pme, 1, false } }
	};
	assert_int_equal(gf_mig_layout_check(h, &l, msg, sizeof(msg)),
			 GF_EINVAL);
	assert_non_null(strstr(msg, "more than 1 x 1g.10gb+me"));
	/* the balanced layout is placed largest first: 3g at 4 */
	int counts[GF_MIG_MAX_PROFILES] = { 0 };
	counts[p1] = 2;
	counts[p3] = 1;
	counts[gf_mig_profile_find(h, "2g.20gb")] = 1;
	l.n = 0;
	assert_int_equal(gf_mig_place(h, counts, &l), 0);
	assert_int_equal(gf_mig_layout_check(h, &l, msg, sizeof(msg)), 0);
	assert_int_equal(l.inst[0].profile, p3);
	assert_int_equal(l.inst[0].start, 4);
	/* 8 x 1g cannot fit (slice 7 takes no 1g) */
	memset(counts, 0, sizeof(counts));
	counts[p1] = 8;
	l.n = 0;
	assert_int_equal(gf_mig_place(h, counts, &l), GF_ENOTFOUND);
	assert_true(gf_mig_profile_name_ok("1c.3g.20gb"));
	assert_true(gf_mig_profile_name_ok("1g.24gb+me.all"));
	assert_false(gf_mig_profile_name_ok("3g40gb"));
	assert_false(gf_mig_profile_name_ok("g.10gb"));
	/* mig-parted's attribute forms, and its malformed ones (issue 22:
	 * the core used to take an empty or broken attribute list) */
	assert_true(gf_mig_profile_name_ok("1g.10gb-me"));
	assert_true(gf_mig_profile_name_ok("1g.10gb+gfx,me"));
	assert_false(gf_mig_profile_name_ok("1g.5gb+"));
	assert_false(gf_mig_profile_name_ok("1c.1g.5gb+"));
	assert_false(gf_mig_profile_name_ok("1g.5gb+me."));
	assert_false(gf_mig_profile_name_ok("1g.5gb+me..all"));
	assert_false(gf_mig_profile_name_ok("1g.5gb+,me"));
	assert_false(gf_mig_profile_name_ok("1g.5gb+ME"));
}

/*
 * Exhaustive reference: the best (served units, then fewest GPUs) over
 * every way to give each idle GPU a pattern, by dynamic programming over
 * served-count vectors (capped at the demand).  GPUs may be of different
 * models: each takes the count vectors that place on its own model, over
 * the demanded names it has.  Units per instance: the test's own table
 * (want_units), not the planner's.
 */
#define EX_MAXD 3

struct ex_model {
	const struct gf_mig_model *m;
	int npat;
	int pats[1024][EX_MAXD];
};

static void ex_patterns(struct ex_model *x, const struct gf_mig_demand *d,
			int nd)
{
	int prof[EX_MAXD], lim[EX_MAXD] = { 1, 1, 1 };
	for (int k = 0; k < nd; k++) {
		prof[k] = gf_mig_profile_find(x->m, d[k].profile);
		lim[k] = prof[k] >= 0 ? x->m->profiles[prof[k]].max + 1 : 1;
	}
	x->npat = 0;
	for (int a = 0; a < lim[0]; a++)
		for (int b = 0; b < lim[1]; b++)
			for (int c = 0; c < lim[2]; c++) {
				int v[EX_MAXD] = { a, b, c };
				int cnt[GF_MIG_MAX_PROFILES] = { 0 };
				for (int k = 0; k < nd; k++)
					if (prof[k] >= 0)
						cnt[prof[k]] += v[k];
				struct gf_mig_layout t = { .n = 0 };
				if ((a || b || c) &&
				    gf_mig_place(x->m, cnt, &t) == 0) {
					assert_true(x->npat < 1024);
					memcpy(x->pats[x->npat++], v,
					       sizeof(v));
				}
			}
}

static void exhaustive(const struct gf_mig_gpu *gpus, int n,
		       const struct gf_mig_demand *d, int nd, const int *units,
		       long *best_units, int *best_used)
{
	static struct ex_model xm[8];
	int nxm = 0, which[16];
	for (int i = 0; i < n; i++) {
		int k;
		for (k = 0; k < nxm; k++)
			if (xm[k].m == gpus[i].model)
				break;
		if (k == nxm) {
			xm[nxm].m = gpus[i].model;
			ex_patterns(&xm[nxm++], d, nd);
		}
		which[i] = k;
	}
	int radix[EX_MAXD] = { 1, 1, 1 }, nstate = 1;
	for (int k = 0; k < nd; k++) {
		radix[k] = d[k].count + 1;
		nstate *= radix[k];
	}
	int *used = malloc(sizeof(int) * (size_t)nstate);
	int *next = malloc(sizeof(int) * (size_t)nstate);
	for (int s = 0; s < nstate; s++)
		used[s] = 1 << 20;
	used[0] = 0;
	for (int gpu = 0; gpu < n; gpu++) {
		const struct ex_model *x = &xm[which[gpu]];
		memcpy(next, used, sizeof(int) * (size_t)nstate);
		for (int s = 0; s < nstate; s++) {
			if (used[s] >= 1 << 20)
				continue;
			int v[EX_MAXD], rest = s;
			for (int k = 0; k < EX_MAXD; k++) {
				v[k] = rest % radix[k];
				rest /= radix[k];
			}
			for (int p = 0; p < x->npat; p++) {
				int t = 0, mul = 1;
				for (int k = 0; k < EX_MAXD; k++) {
					int y = v[k] + x->pats[p][k];
					if (y > radix[k] - 1)
						y = radix[k] - 1;
					t += y * mul;
					mul *= radix[k];
				}
				if (used[s] + 1 < next[t])
					next[t] = used[s] + 1;
			}
		}
		memcpy(used, next, sizeof(int) * (size_t)nstate);
	}
	*best_units = -1;
	*best_used = 0;
	for (int s = 0; s < nstate; s++) {
		if (used[s] >= 1 << 20)
			continue;
		long u = 0;
		int rest = s;
		for (int k = 0; k < EX_MAXD; k++) {
			u += (long)(rest % radix[k]) * (k < nd ? units[k] : 0);
			rest /= radix[k];
		}
		if (u > *best_units ||
		    (u == *best_units && used[s] < *best_used)) {
			*best_units = u;
			*best_used = used[s];
		}
	}
	free(used);
	free(next);
}

/* The unit of a demand, by hand from the tables (reference 1.4): memory
 * slices on the model that defines the name. */
static int want_units(const char *name)
{
	static const struct {
		const char *name;
		int units;
	} t[] = {
		{ "1g.5gb", 1 },  { "1g.10gb", 1 }, /* 1 on 80 GB models */
		{ "2g.10gb", 2 }, { "3g.20gb", 4 }, { "4g.20gb", 4 },
		{ "7g.40gb", 8 }, { "1g.20gb", 2 }, { "2g.20gb", 2 },
		{ "3g.40gb", 4 }, { "4g.40gb", 4 }, { "7g.80gb", 8 },
		{ "1g.6gb", 1 },  { "2g.12gb", 2 }, { "4g.24gb", 4 },
		{ "1g.18gb", 1 }, { "1g.35gb", 2 }, { "2g.35gb", 2 },
		{ "3g.71gb", 4 }, { "4g.71gb", 4 }, { "7g.141gb", 8 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(t[i].name, name))
			return t[i].units;
	fail_msg("no hand unit for %s", name);
	return 0;
}

static void test_units(void **state)
{
	(void)state;
	static const char *const names[] = {
		"1g.5gb",  "1g.10gb", "2g.10gb", "3g.20gb", "1g.20gb",
		"3g.40gb", "7g.80gb", "1g.6gb",	 "4g.24gb", "1g.35gb",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		assert_int_equal(gf_mig_profile_units(names[i]),
				 want_units(names[i]));
	/* 1g.10gb is two slices on an A100 40GB, one on an H100: the unit
	 * is the one, wherever it lands */
	const struct gf_mig_model *a = gf_mig_model_by_id("a100-40gb");
	assert_int_equal(a->profiles[gf_mig_profile_find(a, "1g.10gb")].mem, 2);
	assert_int_equal(gf_mig_profile_units("1g.11gb"), 0);
}

/* Instances of `name` in a plan's final layouts. */
static int count_name(const struct gf_mig_gpu *gpus,
		      const struct gf_mig_plan *p, const char *name)
{
	int n = 0;
	for (int i = 0; i < p->ngpus; i++)
		for (int j = 0; j < p->gpus[i].layout.n; j++)
			n += !strcmp(gpus[i].model
					     ->profiles[p->gpus[i]
								.layout.inst[j]
								.profile]
					     .name,
				     name);
	return n;
}

static void print_layout(const char *what, const struct gf_mig_model *m,
			 const struct gf_mig_layout *l)
{
	print_message("%s:", what);
	for (int x = 0; x < l->n; x++)
		print_message(" %s@%d%s", m->profiles[l->inst[x].profile].name,
			      l->inst[x].start, l->inst[x].busy ? "*" : "");
	print_message("\n");
}

/* What every plan must be, whatever the fleet: valid layouts, every busy
 * instance kept in place, and nothing created beyond the demand (a
 * changed GPU holds busy instances and served ones only). */
static void check_plan_rules(const struct gf_mig_gpu *gpus, int n,
			     const struct gf_mig_demand *d, int nd,
			     const struct gf_mig_plan *p)
{
	char msg[160];
	long units = 0;
	for (int k = 0; k < nd; k++) {
		assert_true(p->served[k] <= d[k].count);
		assert_int_equal(p->served[k] + p->unserved[k], d[k].count);
		units += (long)p->served[k] * want_units(d[k].profile);
	}
	assert_int_equal(p->served_units, units);
	int used = 0;
	for (int i = 0; i < n; i++) {
		const struct gf_mig_model *m = gpus[i].model;
		const struct gf_mig_gpu_plan *g = &p->gpus[i];
		assert_int_equal(
			gf_mig_layout_check(m, &g->layout, msg, sizeof(msg)),
			0);
		used += g->layout.n > 0;
		for (int b = 0; b < gpus[i].current.n; b++) {
			const struct gf_mig_instance *in =
				&gpus[i].current.inst[b];
			if (!in->busy)
				continue;
			bool kept = false;
			for (int j = 0; j < g->layout.n; j++)
				kept |= g->layout.inst[j].profile ==
						in->profile &&
					g->layout.inst[j].start == in->start &&
					g->layout.inst[j].busy;
			if (!kept) {
				print_layout("now", m, &gpus[i].current);
				print_layout("planned", m, &g->layout);
				fail_msg("GPU %d (%s): busy %s@%d not kept", i,
					 m->id, m->profiles[in->profile].name,
					 in->start);
			}
		}
		/* created instances are of demanded profiles only */
		for (int j = 0; j < g->ncreate; j++) {
			const char *name =
				m->profiles[g->create[j].profile].name;
			bool demanded = false;
			for (int k = 0; k < nd; k++)
				demanded |= !strcmp(name, d[k].profile) &&
					    d[k].count > 0;
			assert_true(demanded);
		}
	}
	assert_int_equal(used, p->used_gpus);
	/* per demand: idle instances on changed GPUs <= served <= demand */
	for (int k = 0; k < nd; k++) {
		int idle_changed = 0, created = 0;
		for (int i = 0; i < n; i++) {
			const struct gf_mig_gpu_plan *g = &p->gpus[i];
			const struct gf_mig_model *m = gpus[i].model;
			for (int j = 0; j < g->ncreate; j++)
				created += !strcmp(
					m->profiles[g->create[j].profile].name,
					d[k].profile);
			if (!g->changed)
				continue;
			for (int j = 0; j < g->layout.n; j++)
				idle_changed +=
					!g->layout.inst[j].busy &&
					!strcmp(m->profiles[g->layout.inst[j]
								    .profile]
							.name,
						d[k].profile);
		}
		assert_true(created <= d[k].count);
		assert_true(idle_changed <= p->served[k]);
	}
}

/* A random valid layout of m, a few instances busy. */
static void random_layout(struct gf_rng *r, const struct gf_mig_model *m,
			  struct gf_mig_layout *out);

static const char *const fleet_models[] = { "h100-80gb", "a100-40gb",
					    "a100-80gb", "a30", "h200" };

static void test_planner_is_optimal(void **state)
{
	(void)state;
	struct gf_rng r;
	gf_rng_seed(&r, 2024);
	int checked = 0, mixed = 0;
	for (int round = 0; round < 240; round++) {
		/* a third on one model (H100, A30, A100 40GB), the rest on
		 * two or three models */
		struct gf_mig_gpu gpus[8];
		memset(gpus, 0, sizeof(gpus));
		int ngpu = round < 80 ? 1 + (int)gf_rng_below(&r, 8)
				      : 2 + (int)gf_rng_below(&r, 5);
		int nmod = round < 80 ? 1 : 2 + (int)gf_rng_below(&r, 2);
		const struct gf_mig_model *ms[3];
		static const int single[3] = { 0, 3, 1 }; /* H100 A30 A100 */
		if (round < 80)
			ms[0] = gf_mig_model_by_id(
				fleet_models[single[round % 3]]);
		for (int k = 0; k < nmod && round >= 80; k++) {
			bool dup; /* distinct models */
			do {
				ms[k] = gf_mig_model_by_id(
					fleet_models[gf_rng_below(&r, 5)]);
				dup = false;
				for (int j = 0; j < k; j++)
					dup |= ms[j] == ms[k];
			} while (dup);
		}
		for (int i = 0; i < ngpu; i++)
			gpus[i].model = ms[i % nmod];
		bool many = false;
		for (int i = 1; i < ngpu; i++)
			many |= gpus[i].model != gpus[0].model;
		/* distinct non-media names of the fleet's models */
		int nd = 1 + (int)gf_rng_below(&r, 3);
		struct gf_mig_demand d[EX_MAXD];
		int units[EX_MAXD];
		for (int k = 0; k < nd; k++) {
			const struct gf_mig_model *m =
				gpus[gf_rng_below(&r, (uint64_t)ngpu)].model;
			int p;
			bool dup;
			do {
				p = (int)gf_rng_below(&r,
						      (uint64_t)m->nprofiles);
				dup = m->profiles[p].me;
				for (int j = 0; j < k; j++)
					dup |= !strcmp(d[j].profile,
						       m->profiles[p].name);
			} while (dup);
			snprintf(d[k].profile, sizeof(d[k].profile), "%s",
				 m->profiles[p].name);
			d[k].count = (int)gf_rng_below(&r, 9);
			units[k] = want_units(d[k].profile);
		}
		struct gf_mig_plan p;
		struct gf_err e;
		int prc = gf_mig_plan(gpus, ngpu, d, nd, &p, &e);
		if (prc)
			print_message("round %d: %s\n", round, e.msg);
		assert_int_equal(prc, 0);
		long best_units;
		int used;
		exhaustive(gpus, ngpu, d, nd, units, &best_units, &used);
		if (p.served_units != best_units || p.used_gpus != used) {
			print_message("round %d: plan %ld units on %d GPUs, "
				      "exhaustive %ld on %d; fleet:",
				      round, p.served_units, p.used_gpus,
				      best_units, used);
			for (int i = 0; i < ngpu; i++)
				print_message(" %s", gpus[i].model->id);
			for (int k = 0; k < nd; k++)
				print_message(" %s=%d", d[k].profile,
					      d[k].count);
			print_message("\n");
		}
		assert_int_equal(p.served_units, best_units);
		assert_int_equal(p.used_gpus, used);
		assert_true(p.optimal);
		check_plan_rules(gpus, ngpu, d, nd, &p);
		/* idle fleet: every instance created, exactly the served */
		for (int k = 0; k < nd; k++)
			assert_int_equal(count_name(gpus, &p, d[k].profile),
					 p.served[k]);
		gf_mig_plan_release(&p);
		checked++;
		mixed += many;
	}
	assert_int_equal(checked, 240);
	assert_int_equal(mixed, 160);
}

/* The issue's cases: no instance beyond the demand; the mixed fleet on
 * the fewest GPUs. */
static void test_planner_creates_what_is_demanded(void **state)
{
	(void)state;
	const struct gf_mig_model *h = gf_mig_model_by_id("h100-80gb");
	const struct gf_mig_model *a = gf_mig_model_by_id("a100-40gb");
	struct gf_mig_gpu g[3];
	memset(g, 0, sizeof(g));
	g[0].model = g[1].model = h;
	struct gf_mig_plan p;
	struct gf_err e;
	struct gf_mig_demand d1[1] = { { "2g.20gb", 1 } };
	assert_int_equal(gf_mig_plan(g, 2, d1, 1, &p, &e), 0);
	assert_int_equal(count_name(g, &p, "2g.20gb"), 1);
	assert_int_equal(p.gpus[0].layout.n + p.gpus[1].layout.n, 1);
	assert_int_equal(p.served[0], 1);
	gf_mig_plan_release(&p);
	struct gf_mig_demand d3[1] = { { "1g.10gb", 3 } };
	assert_int_equal(gf_mig_plan(g, 2, d3, 1, &p, &e), 0);
	assert_int_equal(count_name(g, &p, "1g.10gb"), 3);
	struct gf_buf out;
	gf_buf_init(&out, 1 << 16);
	assert_int_equal(gf_mig_render_yaml(g, d3, &p, "x", &out), 0);
	assert_non_null(strstr(gf_buf_str(&out), "\"1g.10gb\": 3\n"));
	assert_null(strstr(gf_buf_str(&out), "\"1g.10gb\": 7"));
	assert_null(strstr(gf_buf_str(&out), "fill"));
	gf_buf_release(&out);
	gf_mig_plan_release(&p);

	/* one H100 holds all six; the A100s stay whole */
	g[0].model = h;
	g[1].model = g[2].model = a;
	struct gf_mig_demand d6[1] = { { "1g.10gb", 6 } };
	assert_int_equal(gf_mig_plan(g, 3, d6, 1, &p, &e), 0);
	assert_int_equal(p.used_gpus, 1);
	assert_int_equal(p.gpus[0].layout.n, 6);
	assert_false(p.gpus[1].used);
	assert_false(p.gpus[2].used);
	assert_int_equal(p.served_units, 6);
	assert_int_equal(p.units[0], 1);
	gf_mig_plan_release(&p);
	/* the other way round: only the A100s can serve 1g.5gb */
	struct gf_mig_demand d5[2] = { { "1g.10gb", 3 }, { "1g.5gb", 7 } };
	assert_int_equal(gf_mig_plan(g, 3, d5, 2, &p, &e), 0);
	assert_int_equal(p.served[0], 3);
	assert_int_equal(p.served[1], 7);
	assert_int_equal(p.used_gpus, 2); /* an A100 and one more */
	check_plan_rules(g, 3, d5, 2, &p);
	gf_mig_plan_release(&p);
}

/* Random current layouts (idle and busy) on mixed fleets: no solver
 * proof to compare with, but the rules hold every time. */
static void test_planner_rules_with_current_layouts(void **state)
{
	(void)state;
	struct gf_rng r;
	gf_rng_seed(&r, 77);
	for (int round = 0; round < 120; round++) {
		struct gf_mig_gpu gpus[8];
		memset(gpus, 0, sizeof(gpus));
		int ngpu = 1 + (int)gf_rng_below(&r, 8);
		for (int i = 0; i < ngpu; i++) {
			gpus[i].model = gf_mig_model_by_id(
				fleet_models[gf_rng_below(&r, 5)]);
			if (gf_rng_below(&r, 2))
				random_layout(&r, gpus[i].model,
					      &gpus[i].current);
		}
		int nd = 1 + (int)gf_rng_below(&r, 3);
		struct gf_mig_demand d[EX_MAXD];
		for (int k = 0; k < nd; k++) {
			const struct gf_mig_model *m =
				gpus[gf_rng_below(&r, (uint64_t)ngpu)].model;
			int pi;
			bool dup;
			do {
				pi = (int)gf_rng_below(&r,
						       (uint64_t)m->nprofiles);
				dup = m->profiles[pi].me;
				for (int j = 0; j < k; j++)
					dup |= !strcmp(d[j].profile,
						       m->profiles[pi].name);
			} while (dup);
			snprintf(d[k].profile, sizeof(d[k].profile), "%s",
				 m->profiles[pi].name);
			d[k].count = (int)gf_rng_below(&r, 9);
		}
		struct gf_mig_plan p;
		struct gf_err e;
		assert_int_equal(gf_mig_plan(gpus, ngpu, d, nd, &p, &e), 0);
		check_plan_rules(gpus, ngpu, d, nd, &p);
		gf_mig_plan_release(&p);
	}
}

static void test_planner_fill(void **state)
{
	(void)state;
	const struct gf_mig_model *h = gf_mig_model_by_id("h100-80gb");
	struct gf_mig_gpu g[2];
	memset(g, 0, sizeof(g));
	g[0].model = g[1].model = h;
	struct gf_mig_demand d[1] = { { "2g.20gb", 1 } };
	struct gf_mig_plan_opts o = { .fill = true };
	struct gf_mig_plan p;
	struct gf_err e;
	assert_int_equal(gf_mig_plan_with(g, 2, d, 1, &o, &p, &e), 0);
	/* served 1; the used GPU filled with two more 2g, shown as such */
	assert_int_equal(p.served[0], 1);
	assert_int_equal(p.filled[0], 2);
	assert_true(p.fill);
	assert_int_equal(p.used_gpus, 1);
	assert_int_equal(p.gpus[0].layout.n, 3);
	assert_int_equal(p.gpus[0].nfill, 2);
	assert_int_equal(p.gpus[0].ncreate, 3);
	assert_false(p.gpus[1].used);
	struct gf_buf out;
	gf_buf_init(&out, 1 << 16);
	assert_int_equal(gf_mig_render_text(g, d, &p, &out), 0);
	assert_non_null(strstr(gf_buf_str(&out), "2g.20gb@2+"));
	assert_non_null(strstr(gf_buf_str(&out), "fill:     2 instances"));
	gf_buf_reset(&out);
	assert_int_equal(gf_mig_render_json(g, d, &p, &out), 0);
	assert_non_null(strstr(gf_buf_str(&out), "\"filled_instances\": 2"));
	gf_buf_reset(&out);
	assert_int_equal(gf_mig_render_yaml(g, d, &p, "x", &out), 0);
	assert_non_null(strstr(gf_buf_str(&out), "# --fill: 2 instances"));
	assert_non_null(strstr(gf_buf_str(&out), "\"2g.20gb\": 3"));
	gf_buf_release(&out);
	gf_mig_plan_release(&p);
}

static void test_planner_busy_and_changes(void **state)
{
	(void)state;
	const struct gf_mig_model *h = gf_mig_model_by_id("h100-80gb");
	int p3 = gf_mig_profile_find(h, "3g.40gb");
	struct gf_mig_gpu g[3];
	memset(g, 0, sizeof(g));
	for (int i = 0; i < 3; i++)
		g[i].model = h;
	/* GPU 0 already holds what is wanted; GPU 1 has a busy 3g at 0 */
	g[0].current = (struct gf_mig_layout){
		2, { { (uint8_t)p3, 4, false }, { (uint8_t)p3, 0, false } }
	};
	g[1].current =
		(struct gf_mig_layout){ 1, { { (uint8_t)p3, 0, true } } };
	struct gf_mig_demand d[2] = { { "3g.40gb", 3 }, { "1g.10gb", 2 } };
	struct gf_mig_plan p;
	struct gf_err e;
	assert_int_equal(gf_mig_plan(g, 3, d, 2, &p, &e), 0);
	assert_int_equal(p.served_slices, 14);
	assert_int_equal(p.served_units, 14);
	check_plan_rules(g, 3, d, 2, &p);
	assert_int_equal(p.used_gpus, 2);
	assert_false(p.gpus[0].changed); /* kept as it was */
	assert_false(p.gpus[2].used);
	/* the busy instance stays where it is */
	bool kept = false;
	for (int j = 0; j < p.gpus[1].layout.n; j++)
		kept |= p.gpus[1].layout.inst[j].profile == p3 &&
			p.gpus[1].layout.inst[j].start == 0 &&
			p.gpus[1].layout.inst[j].busy;
	assert_true(kept);
	assert_int_equal(p.gpus[1].ncreate, 2); /* the two 1g */
	gf_mig_plan_release(&p);

	/* demand beyond the fleet: served what fits, the rest unserved */
	struct gf_mig_demand big[1] = { { "1g.10gb", 30 } };
	memset(g, 0, sizeof(g));
	for (int i = 0; i < 3; i++)
		g[i].model = h;
	assert_int_equal(gf_mig_plan(g, 3, big, 1, &p, &e), 0);
	assert_int_equal(p.served[0], 21);
	assert_int_equal(p.unserved[0], 9);
	gf_mig_plan_release(&p);
	/* a profile the fleet does not have */
	struct gf_mig_demand bad[1] = { { "1g.5gb", 1 } };
	assert_int_equal(gf_mig_plan(g, 3, bad, 1, &p, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "'1g.5gb'"));
}

static void test_migparted_files(void **state)
{
	(void)state;
	/* one literal per line: clang warns on split ones in arrays */
	static const char configmap[] = "reference/mig-parted/gpu-operator-"
					"default-mig-parted-config.configmap."
					"yaml";
	static const char *const files[] = {
		configmap,
		"reference/mig-parted/mig-parted-examples-config.yaml",
		"reference/mig-parted/mig-parted-systemd-config-default.yaml",
	};
	for (size_t i = 0; i < 3; i++) {
		char path[512];
		shared_path(path, sizeof(path), files[i]);
		if (access(path, R_OK) != 0) {
			print_message("shared data absent: %s\n", path);
			skip();
		}
		struct gf_mp_file f;
		struct gf_err e;
		assert_int_equal(gf_mp_read(path, &f, &e), 0);
		assert_true(f.n > 5);
		struct gf_buf out;
		gf_buf_init(&out, 1 << 20);
		int warnings;
		assert_int_equal(gf_mp_validate(&f, &out, &warnings), 0);
		gf_buf_release(&out);
		if (i == 1) {
			const struct gf_mp_config *c =
				gf_mp_find(&f, "custom-config");
			assert_non_null(c);
			assert_int_equal(c->n, 5);
			assert_int_equal(c->entries[1].devices[0], 4);
		}
		if (i == 0) { /* ConfigMap: lines are the file's own */
			const struct gf_mp_config *c =
				gf_mp_find(&f, "all-1g.5gb");
			assert_non_null(c);
			assert_int_equal(c->line, 20);
		}
		gf_mp_release(&f);
	}
}

static void random_layout(struct gf_rng *r, const struct gf_mig_model *m,
			  struct gf_mig_layout *out)
{
	*out = random_mig_layout(r, m);
	for (int k = 0; k < out->n; k++)
		out->inst[k].busy = gf_rng_below(r, 4) == 0;
}

/* ---- the H200 table against a real H200's driver ---- */

/* The integer after "key": within [s, end), or -1. */
static long json_int(const char *s, const char *end, const char *key)
{
	char k[64];
	snprintf(k, sizeof(k), "\"%s\":", key);
	const char *p = strstr(s, k);
	if (!p || p >= end)
		return -1;
	return strtol(p + strlen(k), NULL, 10);
}

static void test_h200_table_matches_recording(void **state)
{
	(void)state;
	char path[512];
	shared_path(path, sizeof(path), "fixtures/h200/nvml-dump.json");
	char *json = test_slurp(path);
	if (!json) {
		print_message("shared data absent: %s (set GPUFLEET_SHARED); "
			      "H200 table not checked\n",
			      path);
		skip();
	}
	const struct gf_mig_model *m = gf_mig_model_by_id("h200");
	assert_non_null(m);
	assert_true(m == gf_mig_model_by_pci(0x2335));
	/* nvml-dump.json: one object per GPU-instance profile enum */
	const char *p = strstr(json, "\"gi_profiles\"");
	assert_non_null(p);
	int seen = 0;
	for (p = strchr(p, '{'); p && *p; p = strchr(p + 1, '{')) {
		const char *end = strchr(p, '}');
		assert_non_null(end);
		long en = json_int(p, end, "profile");
		long mb = json_int(p, end, "memorySizeMB");
		if (en < 0)
			break; /* past the profile list */
		for (int i = 0; i < m->nprofiles; i++) {
			const struct gf_mig_profile *pr = &m->profiles[i];
			if (pr->nvml_enum != en)
				continue;
			assert_true(mb > 0);
			assert_int_equal(json_int(p, end, "id"),
					 pr->profile_id);
			assert_int_equal(json_int(p, end, "sliceCount"),
					 pr->compute);
			assert_int_equal(json_int(p, end, "instanceCount"),
					 pr->max);
			assert_int_equal(
				json_int(p, end, "multiprocessorCount"),
				pr->sms);
			if (fabs((double)mb / 1024.0 - pr->mem_gib) > 1e-3)
				fail_msg("%s: driver %ld MB = %.2f GiB, table "
					 "%.2f",
					 pr->name, mb, (double)mb / 1024.0,
					 (double)pr->mem_gib);
			seen++;
		}
		p = end;
	}
	assert_int_equal(seen, m->nprofiles);
	free(json);

	/* nvidia-smi mig -lgip: GiB and SMs per name; -lgipp: placements */
	shared_path(path, sizeof(path),
		    "fixtures/h200/nvidia-smi-mig-lgip.txt");
	char *lgip = test_slurp(path);
	assert_non_null(lgip);
	seen = 0;
	for (char *line = strtok(lgip, "\n"); line; line = strtok(NULL, "\n")) {
		char name[32];
		unsigned id, fr, total, sm;
		float gib;
		if (sscanf(line, "| %*d MIG %31s %u %u/%u %f %*s %u", name, &id,
			   &fr, &total, &gib, &sm) != 6)
			continue;
		int i = gf_mig_profile_find(m, name);
		assert_true(i >= 0);
		assert_int_equal(id, m->profiles[i].profile_id);
		assert_int_equal(total, m->profiles[i].max);
		assert_int_equal(sm, m->profiles[i].sms);
		assert_true(fabsf(gib - m->profiles[i].mem_gib) < 1e-3f);
		seen++;
	}
	assert_int_equal(seen, m->nprofiles);
	free(lgip);
	shared_path(path, sizeof(path),
		    "fixtures/h200/nvidia-smi-mig-lgipp.txt");
	char *lgipp = test_slurp(path);
	assert_non_null(lgipp);
	seen = 0;
	for (char *line = strtok(lgipp, "\n"); line;
	     line = strtok(NULL, "\n")) {
		unsigned id;
		int off = 0;
		if (sscanf(line, "GPU %*d Profile ID %u Placement%*[s ]: {%n",
			   &id, &off) != 1 ||
		    off == 0)
			continue;
		unsigned starts = 0, size = 0;
		char *q = line + off;
		while (*q && *q != '}') {
			starts |= 1u << strtoul(q, &q, 10);
			if (*q == ',')
				q++;
		}
		assert_int_equal(sscanf(q, "}:%u", &size), 1);
		/* ids 19 and 20 (1g and 1g+me) share a placement table */
		for (int i = 0; i < m->nprofiles; i++)
			if (m->profiles[i].profile_id == id) {
				assert_int_equal(starts, m->profiles[i].starts);
				assert_int_equal(size, m->profiles[i].mem);
				seen++;
			}
	}
	assert_int_equal(seen, m->nprofiles);
	free(lgipp);
}

/* mig validate: a profile no GPU has is an error (not one warning among
 * many); a config valid on some models only says which. */
static void test_validate_rules(void **state)
{
	(void)state;
	struct gf_mp_file f;
	struct gf_err e;
	assert_int_equal(
		gf_mp_read("tests/fixtures/mig/bad-rules.yaml", &f, &e), 0);
	struct gf_buf out;
	gf_buf_init(&out, 1 << 16);
	int warnings, errors = gf_mp_validate(&f, &out, &warnings);
	const char *o = gf_buf_str(&out);
	assert_int_equal(errors, 5);
	assert_int_equal(warnings, 1);
	assert_non_null(strstr(o, ":26: error: config 'no-such-profile': "
				  "'1g.11gb' is a profile of no GPU"));
	assert_non_null(strstr(o, ":28: note: config 'some-models-only': "
				  "valid on a100-80gb, h100-80gb only; these "
				  "instances do not fit on one a100-40gb"));
	assert_non_null(strstr(o, "'1g.10gb' is not a profile of the GB200"));
	assert_non_null(strstr(o, "warning: config 'rtx-pro-by-name'"));
	assert_non_null(strstr(o, "'no-model-has-both': no GPU model has all"));
	gf_buf_release(&out);
	gf_mp_release(&f);
}

/* ---- facts of the golden files, computed by hand ---- */

static char *golden(const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "tests/golden/expected/%s.out", name);
	char *s = test_slurp(path);
	if (!s)
		fail_msg("cannot read %s (run from the repository root)", path);
	return s;
}

/* Instances of `name` in the text plan's rows ("X=name@S"). */
static int text_instances(const char *s, const char *name)
{
	char pat[48];
	snprintf(pat, sizeof(pat), "=%s@", name);
	return test_count(s, pat);
}

static void test_golden_plans_by_hand(void **state)
{
	(void)state;
	/* mig-plan-h100: 20 x 1g + 4 x 3g on 8 H100s.  Compute slices
	 * 20 + 12 = 32 > 4 x 7, memory 20 + 16 = 36 > 4 x 8: at least 5
	 * GPUs; and exactly the demanded instances */
	char *s = golden("mig-plan-h100");
	assert_int_equal(text_instances(s, "1g.10gb"), 20);
	assert_int_equal(text_instances(s, "3g.40gb"), 4);
	assert_non_null(strstr(s, "GPUs:     5 used, 3 free"));
	free(s);
	/* mig-plan-mixed: the A30 profiles need 4 + 3 = 7 A30 slices > 4,
	 * so both A30s; 6 x 1g.5gb + 3g.20gb need 9 compute slices > 7, so
	 * both A100s: 4 GPUs */
	s = golden("mig-plan-mixed");
	assert_int_equal(text_instances(s, "1g.5gb"), 6);
	assert_int_equal(text_instances(s, "2g.12gb"), 2);
	assert_int_equal(text_instances(s, "1g.6gb"), 3);
	assert_int_equal(text_instances(s, "3g.20gb"), 1);
	assert_non_null(strstr(s, "GPUs:     4 used, 0 free"));
	free(s);
	/* mig-plan-h100-yaml: 7g takes a GPU; 6 + 4 + 6 = 16 compute slices
	 * > 2 x 7 for the rest: 4 GPUs; the counts, summed over entries,
	 * are the demand */
	s = golden("mig-plan-h100-yaml");
	int sum[4] = { 0 }, enabled = 0;
	static const char *const names[4] = { "1g.10gb", "2g.20gb", "3g.40gb",
					      "7g.80gb" };
	int devices = 1;
	for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
		if (strstr(line, "- devices: ["))
			devices = 1 + test_count(line, ",");
		if (strstr(line, "mig-enabled: true"))
			enabled += devices;
		for (int k = 0; k < 4; k++) {
			char pat[32];
			snprintf(pat, sizeof(pat), "\"%s\": ", names[k]);
			const char *q = strstr(line, pat);
			if (q)
				sum[k] += devices * atoi(q + strlen(pat));
		}
	}
	assert_int_equal(sum[0], 6);
	assert_int_equal(sum[1], 2);
	assert_int_equal(sum[2], 2);
	assert_int_equal(sum[3], 1);
	assert_int_equal(enabled, 4);
	free(s);
	/* mig-plan-h100-json: 3 H100s hold 24 memory slices; 4 x 3g (16)
	 * + 8 x 1g fill them, so served units are 24, the rest unserved */
	s = golden("mig-plan-h100-json");
	assert_non_null(strstr(s, "\"served_units\": 24,"));
	assert_non_null(strstr(s, "\"bound_units\": 24,"));
	assert_int_equal(test_count(s, "\"profile\": \"1g.10gb\""),
			 2 * 8); /* instances and create lists */
	assert_non_null(strstr(s, "\"unserved\": {\n    \"1g.10gb\": 12,"));
	free(s);
}

/* The goldens of issue 8's cases, by hand: what was demanded is what is
 * planned, --fill adds what fits and says so, the busy instance stays. */
static void test_golden_issue_plans_by_hand(void **state)
{
	(void)state;
	/* 2g.20gb=1 on two H100s: one instance, one GPU */
	char *s = golden("mig-plan-no-padding");
	assert_int_equal(test_count(s, "=2g.20gb@"), 1);
	assert_non_null(strstr(s, "GPUs:     1 used, 1 free"));
	free(s);
	s = golden("mig-plan-no-padding-yaml");
	assert_non_null(strstr(s, "\"1g.10gb\": 3\n"));
	assert_int_equal(test_count(s, "mig-enabled: true"), 1);
	free(s);
	/* --fill: 1g.10gb=3, an H100 takes seven 1g (slice 7 takes none),
	 * so four more, each marked */
	s = golden("mig-plan-fill");
	assert_int_equal(text_instances(s, "1g.10gb"), 7);
	int marks = 0; /* "@S+": an instance --fill added */
	for (const char *q = s; (q = strchr(q, '+')); q++)
		marks += q - s >= 2 && q[-1] >= '0' && q[-1] <= '9' &&
			 q[-2] == '@';
	assert_int_equal(marks, 4);
	assert_non_null(strstr(s, "1g.10gb@6+\n"));
	assert_non_null(strstr(s, "fill:     4 instances"));
	free(s);
	s = golden("mig-plan-fill-yaml");
	assert_non_null(strstr(s, "# --fill: 4 instances"));
	assert_non_null(strstr(s, "\"1g.10gb\": 7\n"));
	free(s);
	/* 2g.20gb=1 on one H100 with --fill: three 2g fit (slices 0-5,
	 * compute 6 of 7), so two more */
	s = golden("mig-plan-fill-json");
	assert_non_null(strstr(s, "\"filled_instances\": 2,"));
	assert_non_null(strstr(s, "\"served_instances\": 1,"));
	free(s);
	/* six 1g.10gb fit one H100 (seven would): 1 GPU, the A100s free */
	s = golden("mig-plan-mixed-fewest");
	assert_int_equal(text_instances(s, "1g.10gb"), 6);
	assert_int_equal(test_count(s, "a100-40gb    ........  keep"), 2);
	assert_non_null(strstr(s, "GPUs:     1 used, 2 free"));
	free(s);
	/* current.txt: GPU 0 holds the two 3g already, GPU 1's busy 3g is
	 * the third, two 1g beside it: 2 GPUs, 5 instances */
	s = golden("mig-plan-current");
	assert_non_null(strstr(s, "keep     A=3g.40gb@0 B=3g.40gb@4\n"));
	assert_non_null(strstr(s, "A=3g.40gb@0* "));
	assert_int_equal(text_instances(s, "1g.10gb"), 2);
	assert_non_null(strstr(s, "served:   5 of 5 instances"));
	free(s);
	/* the busy 1g.5gb@2 stays; it serves the 1g.5gb demanded */
	s = golden("mig-plan-busy-kept");
	assert_non_null(strstr(s, "=1g.5gb@2*"));
	assert_int_equal(text_instances(s, "1g.5gb"), 1);
	assert_int_equal(text_instances(s, "2g.10gb"), 2);
	free(s);
}

/* The simulator's goldens: rows checked against formulas worked out by
 * hand for their mixes. */
static void test_golden_simulations_by_hand(void **state)
{
	(void)state;
	/* sim-mig-7g: a 7g takes a whole GPU, 1g go seven to a GPU:
	 * planned = d7 + ceil(d1 / 7); all-1g and all-balanced have no 7g */
	char *s = golden("sim-mig-7g");
	int rows = 0;
	for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
		int req, d1, d7, planned;
		char a[16], b[16];
		if (sscanf(line, "%d %d/%d %15s %15s %d", &req, &d1, &d7, a, b,
			   &planned) != 6)
			continue;
		assert_int_equal(d1 + d7, req);
		assert_int_equal(planned, d7 + (d1 + 6) / 7);
		if (d7 > 0) {
			assert_string_equal(a, "never");
			assert_string_equal(b, "never");
		}
		rows++;
	}
	assert_int_equal(rows, GF_MIGSIM_POINTS);
	free(s);
	/* sim-mig-a30-json: on an A30 any mix of 1g (1 slice) and 2g (2)
	 * fits four slices: planned = ceil((d1 + 2 d2) / 4); balanced is
	 * 2 x 1g + 2g: max(ceil(d1 / 2), d2) */
	s = golden("sim-mig-a30-json");
	rows = 0;
	for (char *q = s; (q = strstr(q, "\"1g.6gb\": ")); q++) {
		int d1 = atoi(q + 10);
		int d2 = atoi(strstr(q, "\"2g.12gb\": ") + 11);
		int bal = atoi(strstr(q, "\"gpus_all_balanced\": ") + 21);
		int planned = atoi(strstr(q, "\"gpus_planned\": ") + 16);
		assert_int_equal(planned, (d1 + 2 * d2 + 3) / 4);
		int want_bal = (d1 + 1) / 2 > d2 ? (d1 + 1) / 2 : d2;
		assert_int_equal(bal, want_bal);
		rows++;
	}
	assert_int_equal(rows, GF_MIGSIM_POINTS);
	free(s);
	/* sim-mig-h100: balanced = max(ceil(d1 / 2), d2, d3); planned at
	 * least the compute bound ceil((d1 + 2 d2 + 3 d3) / 7), the memory
	 * bound ceil((d1 + 2 d2 + 4 d3) / 8) and ceil(d3 / 2) */
	s = golden("sim-mig-h100");
	rows = 0;
	for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
		int req, d1, d2, d3, bal, planned;
		char a[16];
		if (sscanf(line, "%d %d/%d/%d %15s %d %d", &req, &d1, &d2, &d3,
			   a, &bal, &planned) != 7)
			continue;
		assert_int_equal(d1 + d2 + d3, req);
		int want_bal = (d1 + 1) / 2;
		want_bal = d2 > want_bal ? d2 : want_bal;
		want_bal = d3 > want_bal ? d3 : want_bal;
		assert_int_equal(bal, want_bal);
		assert_true(planned >= (d1 + 2 * d2 + 3 * d3 + 6) / 7);
		assert_true(planned >= (d1 + 2 * d2 + 4 * d3 + 7) / 8);
		assert_true(planned >= (d3 + 1) / 2);
		assert_true(planned <= bal);
		rows++;
	}
	assert_int_equal(rows, GF_MIGSIM_POINTS);
	free(s);
}

/* Given less room than a plan's page needs, each renderer fails with
 * GF_ETOOBIG; none returns a cut page. */
static void test_render_caps(void **state)
{
	(void)state;
	const struct gf_mig_model *h = gf_mig_model_by_id("h100-80gb");
	struct gf_mig_gpu g[2] = { { .model = h }, { .model = h } };
	struct gf_mig_demand d[2] = { { "1g.10gb", 5 }, { "3g.40gb", 1 } };
	struct gf_mig_plan p;
	struct gf_err e;
	assert_int_equal(gf_mig_plan(g, 2, d, 2, &p, &e), 0);
	for (int kind = 0; kind < 3; kind++) {
		struct gf_buf b;
		gf_buf_init(&b, 1 << 20);
		int rc = kind == 0   ? gf_mig_render_text(g, d, &p, &b)
			 : kind == 1 ? gf_mig_render_json(g, d, &p, &b)
				     : gf_mig_render_yaml(g, d, &p, "x", &b);
		assert_int_equal(rc, 0);
		size_t full = b.len;
		gf_buf_release(&b);
		for (size_t cap = 1; cap < full; cap += full / 53 + 1) {
			gf_buf_init(&b, cap);
			rc = kind == 0 ? gf_mig_render_text(g, d, &p, &b)
			     : kind == 1
				     ? gf_mig_render_json(g, d, &p, &b)
				     : gf_mig_render_yaml(g, d, &p, "x", &b);
			assert_int_equal(rc, GF_ETOOBIG);
			gf_buf_release(&b);
		}
	}
	gf_mig_plan_release(&p);
}

/* The current-layout file: what it reads, and each error with file:line. */
static void test_current_layout_file(void **state)
{
	(void)state;
	const struct gf_mig_model *h = gf_mig_model_by_id("h100-80gb");
	struct gf_mig_gpu g[2] = { { .model = h }, { .model = h } };
	bool listed[2] = { false, false };
	struct gf_err e;
	char path[64];
	static const struct {
		const char *text;
		int rc;
		const char *msg;
	} cases[] = {
		{ "# two GPUs\n1: 3g.40gb@4 1g.10gb@0*\n", 0, "" },
		{ "2: 1g.10gb@0\n", GF_EPARSE, ":1: expected 'INDEX:" },
		{ "0 1g.10gb@0\n", GF_EPARSE, ":1: expected 'INDEX:" },
		{ "\n0: 1g.10gb\n", GF_EPARSE,
		  ":2: '1g.10gb' is not PROFILE@START of a h100-80gb" },
		{ "0: 9g.99gb@0\n", GF_EPARSE, "'9g.99gb' is not" },
		{ "0: 1g.10gb@x\n", GF_EPARSE, "is not PROFILE@START" },
		{ "0: 3g.40gb@4 3g.40gb@4\n", GF_EINVAL, ":1: GPU 0: " },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(path, sizeof(path), "/tmp/gf-mig-current-XXXXXX");
		int fd = mkstemp(path);
		assert_true(fd >= 0);
		ssize_t len = (ssize_t)strlen(cases[i].text);
		assert_int_equal(write(fd, cases[i].text, (size_t)len), len);
		close(fd);
		memset(g[0].current.inst, 0, sizeof(g[0].current.inst));
		g[0].current.n = g[1].current.n = 0;
		gf_err_clear(&e);
		int rc = gf_mig_current_read(path, g, 2, listed, &e);
		if (rc != cases[i].rc || !strstr(e.msg, cases[i].msg))
			print_message("case %zu: %d '%s'\n", i, rc, e.msg);
		assert_int_equal(rc, cases[i].rc);
		assert_non_null(strstr(e.msg, cases[i].msg));
		if (i == 0) {
			assert_true(listed[1] && !listed[0]);
			assert_int_equal(g[1].current.n, 2);
			assert_true(g[1].current.inst[1].busy);
			assert_int_equal(g[1].current.inst[0].start, 4);
		} else {
			assert_non_null(strstr(e.msg, path));
		}
		unlink(path);
	}
	/* a line over the cap is an error, never split */
	snprintf(path, sizeof(path), "/tmp/gf-mig-current-XXXXXX");
	int fd = mkstemp(path);
	char big[GF_MIG_CURRENT_LINE_MAX + 64];
	memset(big, ' ', sizeof(big));
	memcpy(big, "0: 1g.10gb@0", 12);
	big[sizeof(big) - 1] = '\n';
	assert_int_equal(write(fd, big, sizeof(big)), (ssize_t)sizeof(big));
	close(fd);
	assert_int_equal(gf_mig_current_read(path, g, 2, NULL, &e), GF_ETOOBIG);
	assert_non_null(strstr(e.msg, ":1: line longer than"));
	unlink(path);
	assert_int_equal(gf_mig_current_read("/nonexistent/x", g, 2, NULL, &e),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enumeration_matches_reference),
		cmocka_unit_test(test_layout_rules),
		cmocka_unit_test(test_h200_table_matches_recording),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_planner_is_optimal),
		cmocka_unit_test(test_planner_creates_what_is_demanded),
		cmocka_unit_test(test_planner_rules_with_current_layouts),
		cmocka_unit_test(test_planner_fill),
		cmocka_unit_test(test_planner_busy_and_changes),
		cmocka_unit_test(test_migparted_files),
		cmocka_unit_test(test_validate_rules),
		cmocka_unit_test(test_golden_plans_by_hand),
		cmocka_unit_test(test_golden_issue_plans_by_hand),
		cmocka_unit_test(test_golden_simulations_by_hand),
		cmocka_unit_test(test_current_layout_file),
		cmocka_unit_test(test_render_caps),
	};
	return cmocka_run_group_tests_name("mig", tests, NULL, NULL);
}
