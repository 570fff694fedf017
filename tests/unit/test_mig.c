/*
 * test_mig.c - MIG rules, enumeration against the reference's exhaustive
 * tables, the planner against an independent exhaustive search, and the
 * mig-parted reader on NVIDIA's own files.
 */
#include <dlfcn.h>

#include <gpufleet/mig_plan.h>
#include <gpufleet/rng.h>

#include "helpers.h"
#include "mig/migparted.h"
#include "topo/nvml_api.h"

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
}

/* Exhaustive reference: the best (served slices, then fewest GPUs) over
 * every way to give each of n idle GPUs a pattern, by dynamic
 * programming over served-count vectors (capped at the demand). */
static void exhaustive(const struct gf_mig_model *m, int n, const int *prof,
		       const int *dem, int nd, long *best_slices,
		       int *best_used)
{
	static struct census c;
	memset(&c, 0, sizeof(c));
	/* patterns over the demanded profiles only */
	struct gf_mig_model sub = *m;
	sub.nprofiles = 0;
	for (int k = 0; k < nd; k++)
		sub.profiles[sub.nprofiles++] = m->profiles[prof[k]];
	static int pats[1024][4];
	int np = 1;
	memset(pats[0], 0, sizeof(pats[0]));
	struct gf_mig_layout l = { .n = 0 };
	(void)l;
	/* all count vectors that place */
	int lim[4] = { 1, 1, 1, 1 };
	for (int k = 0; k < nd; k++)
		lim[k] = sub.profiles[k].max + 1;
	for (int a = 0; a < lim[0]; a++)
		for (int b = 0; b < lim[1]; b++)
			for (int cc = 0; cc < lim[2]; cc++) {
				int cnt[GF_MIG_MAX_PROFILES] = { a, b, cc };
				struct gf_mig_layout t = { .n = 0 };
				if ((a || b || cc) &&
				    gf_mig_place(&sub, cnt, &t) == 0) {
					pats[np][0] = a;
					pats[np][1] = b;
					pats[np][2] = cc;
					np++;
				}
			}
	int radix[3] = { 1, 1, 1 }, nstate = 1;
	for (int k = 0; k < nd; k++) {
		radix[k] = dem[k] + 1;
		nstate *= radix[k];
	}
	int *used = malloc(sizeof(int) * (size_t)nstate);
	int *next = malloc(sizeof(int) * (size_t)nstate);
	for (int s = 0; s < nstate; s++)
		used[s] = 1 << 20;
	used[0] = 0;
	for (int gpu = 0; gpu < n; gpu++) {
		for (int s = 0; s < nstate; s++)
			next[s] = used[s];
		for (int s = 0; s < nstate; s++) {
			if (used[s] >= 1 << 20)
				continue;
			int v[3], rest = s;
			for (int k = 0; k < 3; k++) {
				v[k] = rest % radix[k];
				rest /= radix[k];
			}
			for (int p = 1; p < np; p++) {
				int t = 0, mul = 1;
				for (int k = 0; k < 3; k++) {
					int x = v[k] + pats[p][k];
					if (x > radix[k] - 1)
						x = radix[k] - 1;
					t += x * mul;
					mul *= radix[k];
				}
				if (used[s] + 1 < next[t])
					next[t] = used[s] + 1;
			}
		}
		memcpy(used, next, sizeof(int) * (size_t)nstate);
	}
	*best_slices = -1;
	*best_used = 0;
	for (int s = 0; s < nstate; s++) {
		if (used[s] >= 1 << 20)
			continue;
		long sl = 0;
		int rest = s;
		for (int k = 0; k < 3; k++) {
			sl += (long)(rest % radix[k]) *
			      (k < nd ? sub.profiles[k].mem : 0);
			rest /= radix[k];
		}
		if (sl > *best_slices ||
		    (sl == *best_slices && used[s] < *best_used)) {
			*best_slices = sl;
			*best_used = used[s];
		}
	}
	free(used);
	free(next);
}

static void test_planner_is_optimal(void **state)
{
	(void)state;
	struct gf_rng r;
	gf_rng_seed(&r, 2024);
	const char *models[] = { "h100-80gb", "a30", "a100-40gb" };
	int checked = 0;
	for (int round = 0; round < 90; round++) {
		const struct gf_mig_model *m =
			gf_mig_model_by_id(models[round % 3]);
		int ngpu = 1 + (int)gf_rng_below(&r, 8);
		int nd = 1 + (int)gf_rng_below(&r, 3), prof[3], dem[3];
		struct gf_mig_demand d[3];
		for (int k = 0; k < nd; k++) {
			int p;
			bool dup;
			do { /* distinct, non-media profiles */
				p = (int)gf_rng_below(&r,
						      (uint64_t)m->nprofiles);
				dup = m->profiles[p].me;
				for (int j = 0; j < k; j++)
					dup |= prof[j] == p;
			} while (dup);
			prof[k] = p;
			dem[k] = (int)gf_rng_below(&r, 9);
			snprintf(d[k].profile, sizeof(d[k].profile), "%s",
				 m->profiles[p].name);
			d[k].count = dem[k];
		}
		struct gf_mig_gpu gpus[8];
		memset(gpus, 0, sizeof(gpus));
		for (int i = 0; i < ngpu; i++)
			gpus[i].model = m;
		struct gf_mig_plan p;
		struct gf_err e;
		int prc = gf_mig_plan(gpus, ngpu, d, nd, &p, &e);
		if (prc)
			print_message("%s x%d: %s (%s=%d %s=%d %s=%d nd %d)\n",
				      m->id, ngpu, e.msg, d[0].profile,
				      d[0].count, nd > 1 ? d[1].profile : "",
				      nd > 1 ? d[1].count : 0,
				      nd > 2 ? d[2].profile : "",
				      nd > 2 ? d[2].count : 0, nd);
		assert_int_equal(prc, 0);
		long slices;
		int used;
		exhaustive(m, ngpu, prof, dem, nd, &slices, &used);
		if (p.served_slices != slices || p.used_gpus != used)
			print_message(
				"%s x%d: plan %ld slices on %d GPUs, "
				"exhaustive %ld on %d (%s=%d %s=%d %s=%d)\n",
				m->id, ngpu, p.served_slices, p.used_gpus,
				slices, used, d[0].profile, d[0].count,
				nd > 1 ? d[1].profile : "-",
				nd > 1 ? d[1].count : 0,
				nd > 2 ? d[2].profile : "-",
				nd > 2 ? d[2].count : 0);
		assert_int_equal(p.served_slices, slices);
		assert_int_equal(p.used_gpus, used);
		assert_true(p.optimal);
		char msg[160];
		for (int i = 0; i < ngpu; i++)
			assert_int_equal(gf_mig_layout_check(m,
							     &p.gpus[i].layout,
							     msg, sizeof(msg)),
					 0);
		gf_mig_plan_release(&p);
		checked++;
	}
	assert_int_equal(checked, 90);
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

/* The fake driver places an instance with no explicit placement at the
 * highest free start: small ones first then 3g fails, as the MIG user
 * guide documents for A100 (-cgi 19,19,14,9). */
static void test_fake_driver_creation_order(void **state)
{
	(void)state;
	const char *lib = getenv("GPUFLEET_NVML_LIBRARY");
	void *dl = lib ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
	if (!dl) {
		print_message("fake NVML not found\n");
		skip();
	}
	setenv("GPUFLEET_FAKE_NVML_FIXTURE",
	       "tests/fixtures/nvml/mig-h100.nvml", 1);
	typedef nvmlReturn_t (*init_t)(void);
	typedef nvmlReturn_t (*handle_t)(unsigned, nvmlDevice_t *);
	typedef nvmlReturn_t (*mode_t_)(nvmlDevice_t, unsigned, nvmlReturn_t *);
	typedef nvmlReturn_t (*create_t)(nvmlDevice_t, unsigned,
					 nvmlGpuInstance_t *);
	init_t init;
	handle_t handle;
	mode_t_ setmode;
	create_t create;
	/* POSIX: data and function pointers convert (see dlsym(3)) */
	void *sym = dlsym(dl, "nvmlInit_v2");
	memcpy(&init, &sym, sizeof(sym));
	sym = dlsym(dl, "nvmlDeviceGetHandleByIndex_v2");
	memcpy(&handle, &sym, sizeof(sym));
	sym = dlsym(dl, "nvmlDeviceSetMigMode");
	memcpy(&setmode, &sym, sizeof(sym));
	sym = dlsym(dl, "nvmlDeviceCreateGpuInstance");
	memcpy(&create, &sym, sizeof(sym));
	assert_non_null(create);
	assert_int_equal(init(), NVML_SUCCESS);
	nvmlDevice_t d;
	nvmlReturn_t act;
	nvmlGpuInstance_t gi;
	assert_int_equal(handle(0, &d), NVML_SUCCESS);
	assert_int_equal(setmode(d, 1, &act), NVML_SUCCESS);
	assert_int_equal(create(d, 19, &gi), NVML_SUCCESS); /* 1g at 6 */
	assert_int_equal(create(d, 19, &gi), NVML_SUCCESS); /* 1g at 5 */
	assert_int_equal(create(d, 14, &gi), NVML_SUCCESS); /* 2g at 2 */
	assert_int_equal(create(d, 9, &gi), NVML_ERROR_INSUFFICIENT_RESOURCES);
	/* the order the guide gives works on a fresh GPU: 3g first */
	assert_int_equal(handle(3, &d), NVML_SUCCESS); /* the L4: no MIG */
	assert_int_equal(setmode(d, 1, &act), NVML_ERROR_NOT_SUPPORTED);
	dlclose(dl);
}

int main(int argc, char **argv)
{
	(void)argc;
	if (getenv("GPUFLEET_NVML_LIBRARY") == NULL) {
		char lib[512];
		fake_nvml_path(argv[0], lib, sizeof(lib));
		setenv("GPUFLEET_NVML_LIBRARY", lib, 1);
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enumeration_matches_reference),
		cmocka_unit_test(test_layout_rules),
		cmocka_unit_test(test_planner_is_optimal),
		cmocka_unit_test(test_planner_busy_and_changes),
		cmocka_unit_test(test_migparted_files),
		cmocka_unit_test(test_fake_driver_creation_order),
	};
	return cmocka_run_group_tests_name("mig", tests, NULL, NULL);
}
