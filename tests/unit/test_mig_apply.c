/*
 * test_mig_apply.c - mig apply against the fake NVML: every valid config
 * on an idle GPU, around busy instances, reconfiguring; the node's MIG
 * state as NVML shows it; one GPU's layout applied and refused; what a
 * layout can reach; the fake placing instances as the driver does (the
 * MIG rules and the planner: test_mig.c).
 */
#include <dlfcn.h>
#include <errno.h>

#include "helpers.h"
#include "mig/apply.h"
#include "mig/migparted.h"
#include "mig/state.h"
#include "topo/nvml.h"
#include "topo/nvml_api.h"

static char tmpdir[64];
static int generation;

/* A fresh fake: the fixture reloaded, the call log emptied. */
static void fresh_fake(const char *fixture)
{
	char gen[16], log[128];
	snprintf(gen, sizeof(gen), "%d", ++generation);
	setenv("GPUFLEET_FAKE_NVML_FIXTURE", fixture, 1);
	setenv("GPUFLEET_FAKE_NVML_GEN", gen, 1);
	snprintf(log, sizeof(log), "%s/calls.log", tmpdir);
	setenv("GPUFLEET_FAKE_NVML_LOG", log, 1);
	unlink(log);
}

/* The calls the fake received since fresh_fake, one per line ("" when
 * none); the caller frees. */
static char *calls(void)
{
	char log[128];
	snprintf(log, sizeof(log), "%s/calls.log", tmpdir);
	char *s = test_slurp(log);
	if (!s) {
		s = malloc(1);
		s[0] = '\0';
	}
	return s;
}

/* Apply config `name` of the YAML `text` (dry or not); e->msg on error. */
static int apply_yaml(const char *text, const char *name, bool dry,
		      struct gf_err *e)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/cfg.yaml", tmpdir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	struct gf_mp_file mf;
	int rc = gf_mp_read(path, &mf, e);
	if (rc)
		print_message("%s\n", e->msg);
	assert_int_equal(rc, 0);
	const struct gf_mp_config *cfg = gf_mp_find(&mf, name);
	assert_non_null(cfg);
	struct gf_buf log;
	gf_buf_init(&log, 1 << 20);
	gf_err_clear(e);
	rc = gf_mig_apply(cfg, dry, &log, e);
	gf_buf_release(&log);
	gf_mp_release(&mf);
	return rc;
}

/* What GPU `index` of the fake holds now, read through NVML (not through
 * gpufleet's apply); -1 when MIG is off. */
static int read_gpu(unsigned index, const struct gf_mig_model *m,
		    struct gf_mig_layout *l)
{
	const struct gf_nvml *nv;
	struct gf_err e;
	assert_int_equal(gf_nvml_open(&nv, &e), 0);
	nvmlDevice_t dev;
	assert_int_equal(nv->nvmlDeviceGetHandleByIndex(index, &dev),
			 NVML_SUCCESS);
	unsigned cur, pend;
	assert_int_equal(nv->nvmlDeviceGetMigMode(dev, &cur, &pend),
			 NVML_SUCCESS);
	l->n = 0;
	for (int p = 0; cur == 1 && p < m->nprofiles; p++) {
		nvmlGpuInstanceProfileInfo_t info;
		if (nv->nvmlDeviceGetGpuInstanceProfileInfo(
			    dev, m->profiles[p].nvml_enum, &info) !=
		    NVML_SUCCESS)
			continue;
		nvmlGpuInstance_t gis[8];
		unsigned n = 8;
		assert_int_equal(
			nv->nvmlDeviceGetGpuInstances(dev, info.id, gis, &n),
			NVML_SUCCESS);
		for (unsigned k = 0; k < n; k++) {
			nvmlGpuInstanceInfo_t gi;
			assert_int_equal(
				nv->nvmlGpuInstanceGetInfo(gis[k], &gi),
				NVML_SUCCESS);
			l->inst[l->n++] = (struct gf_mig_instance){
				(uint8_t)p, (uint8_t)gi.placement.start, false
			};
		}
	}
	gf_nvml_close();
	return cur == 1 ? 0 : -1;
}

#define MIG_H100 "tests/fixtures/nvml/mig-h100.nvml"

/* A config of one entry for GPU `gpu`: counts[i] of profile i of m. */
static void config_text(char *out, size_t size, const struct gf_mig_model *m,
			int gpu, const int *counts)
{
	size_t len = (size_t)snprintf(out, size,
				      "version: v1\nmig-configs:\n  c:\n"
				      "    - devices: [%d]\n"
				      "      mig-enabled: true\n"
				      "      mig-devices:\n",
				      gpu);
	for (int i = 0; i < m->nprofiles; i++)
		if (counts[i])
			len += (size_t)snprintf(out + len, size - len,
						"        \"%s\": %d\n",
						m->profiles[i].name, counts[i]);
}

struct multisets {
	int n;
	int sets[256][GF_MIG_MAX_PROFILES];
};

static int multiset_cb(const struct gf_mig_layout *l, void *arg)
{
	struct multisets *ms = arg;
	int c[GF_MIG_MAX_PROFILES] = { 0 };
	for (int i = 0; i < l->n; i++)
		c[l->inst[i].profile]++;
	for (int k = 0; k < ms->n; k++)
		if (!memcmp(ms->sets[k], c, sizeof(c)))
			return 0;
	assert_true(ms->n < 256);
	memcpy(ms->sets[ms->n++], c, sizeof(c));
	return 0;
}

/* Every valid config applies to an idle GPU with MIG off: the calls are
 * SetMigMode, then per instance a creation with an explicit placement and
 * a compute instance, largest first; the GPU then holds exactly the
 * config.  (The cases: 1g.10gb x3, x5, 2g.20gb x2, 1g.20gb x2,
 * 1g.10gb + 2g.20gb were refused.) */
static void test_apply_every_valid_config_on_idle_gpu(void **state)
{
	(void)state;
	const struct gf_mig_model *h = gf_mig_model_by_id("h100-80gb");
	static struct multisets ms;
	ms.n = 0;
	gf_mig_enumerate(h, multiset_cb, &ms);
	assert_true(ms.n > 77); /* with the +me variants */
	for (int k = 0; k < ms.n; k++) {
		char text[1024];
		config_text(text, sizeof(text), h, 0, ms.sets[k]);
		fresh_fake(MIG_H100);
		struct gf_err e;
		int rc = apply_yaml(text, "c", false, &e);
		if (rc)
			print_message("%s: %s\n", text, e.msg);
		assert_int_equal(rc, 0);
		char *log = calls();
		int want = 0;
		for (int i = 0; i < h->nprofiles; i++)
			want += ms.sets[k][i];
		assert_int_equal(test_count(log, "nvmlDeviceSetMigMode gpu=0 "
						 "mode=1 = 0"),
				 1);
		assert_int_equal(test_count(log, "WithPlacement gpu=0"), want);
		assert_int_equal(test_count(log, "CreateComputeInstance gpu=0"),
				 want);
		assert_int_equal(test_count(log, " = 0\n"),
				 1 + 2 * want); /* every call succeeded */
		assert_int_equal(
			test_count(log, "nvmlDeviceCreateGpuInstance "),
			0); /* never the driver's own placement */
		assert_int_equal(test_count(log, "Destroy"), 0);
		assert_int_equal(test_count(log, "gpu=1"), 0);
		/* largest first */
		unsigned last = 99;
		for (const char *q = log; (q = strstr(q, " size="));) {
			unsigned sz = (unsigned)strtoul(q + 6, NULL, 10);
			assert_true(sz <= last);
			last = sz;
			q += 6;
		}
		free(log);
		struct gf_mig_layout l;
		assert_int_equal(read_gpu(0, h, &l), 0);
		int got[GF_MIG_MAX_PROFILES] = { 0 };
		for (int i = 0; i < l.n; i++)
			got[l.inst[i].profile]++;
		assert_memory_equal(got, ms.sets[k], sizeof(got));
		char msg[160];
		assert_int_equal(gf_mig_layout_check(h, &l, msg, sizeof(msg)),
				 0);
		/* the dry run with no NVML lists the same creations */
		struct gf_mig_gpu og = { h, { .n = 0 } };
		char path[128];
		snprintf(path, sizeof(path), "%s/cfg.yaml", tmpdir);
		struct gf_mp_file mf;
		assert_int_equal(gf_mp_read(path, &mf, &e), 0);
		struct gf_buf out;
		gf_buf_init(&out, 1 << 16);
		assert_int_equal(gf_mig_apply_offline(gf_mp_find(&mf, "c"), &og,
						      NULL, 1, &out, &e),
				 0);
		assert_int_equal(test_count(gf_buf_str(&out),
					    "CreateGpuInstanceWithPlacement"),
				 want);
		gf_buf_release(&out);
		gf_mp_release(&mf);
	}
}

static const char apply_cfgs[] =
	"version: v1\n"
	"mig-configs:\n"
	"  balanced:\n"
	"    - devices: [1]\n"
	"      mig-enabled: true\n"
	"      mig-devices: { \"1g.10gb\": 2, \"2g.20gb\": 1, \"3g.40gb\": 1 }\n"
	"  two-2g:\n"
	"    - devices: [1]\n"
	"      mig-enabled: true\n"
	"      mig-devices: { \"3g.40gb\": 1, \"2g.20gb\": 2 }\n"
	"  all-1g:\n"
	"    - devices: [1, 2]\n"
	"      mig-enabled: true\n"
	"      mig-devices: { \"1g.10gb\": 7 }\n"
	"  off:\n"
	"    - devices: [2]\n"
	"      mig-enabled: false\n"
	"  seven:\n"
	"    - devices: [0]\n"
	"      mig-enabled: true\n"
	"      mig-devices: { \"1g.10gb\": 7 }\n"
	"  big:\n"
	"    - devices: [0]\n"
	"      mig-enabled: true\n"
	"      mig-devices: { \"4g.40gb\": 1, \"3g.40gb\": 1 }\n";

/* GPU 1 of the fixture: a busy 3g.40gb at 4, idle 1g.10gb at 0 and 1. */
static void test_apply_around_busy_instances(void **state)
{
	(void)state;
	const struct gf_mig_model *h = gf_mig_model_by_id("h100-80gb");
	int p1 = gf_mig_profile_find(h, "1g.10gb");
	int p2 = gf_mig_profile_find(h, "2g.20gb");
	int p3 = gf_mig_profile_find(h, "3g.40gb");
	struct gf_err e;
	struct gf_mig_layout l;

	/* balanced: everything there stays; one 2g created, at 2 */
	fresh_fake(MIG_H100);
	assert_int_equal(apply_yaml(apply_cfgs, "balanced", false, &e), 0);
	char *log = calls();
	assert_string_equal(log, "nvmlDeviceCreateGpuInstanceWithPlacement "
				 "gpu=1 id=14 start=2 size=2 = 0\n"
				 "nvmlGpuInstanceCreateComputeInstance gpu=1 "
				 "gi_start=2 ci_profile=1 = 0\n");
	free(log);
	assert_int_equal(read_gpu(1, h, &l), 0);
	assert_int_equal(l.n, 4);

	/* two 2g: the idle 1g go (compute instance first), the busy 3g
	 * stays, the 2g take 0 and 2 */
	fresh_fake(MIG_H100);
	assert_int_equal(apply_yaml(apply_cfgs, "two-2g", false, &e), 0);
	log = calls();
	assert_string_equal(
		log,
		"nvmlComputeInstanceDestroy gpu=1 gi_start=0 = 0\n"
		"nvmlGpuInstanceDestroy gpu=1 id=19 start=0 = 0\n"
		"nvmlComputeInstanceDestroy gpu=1 gi_start=1 = 0\n"
		"nvmlGpuInstanceDestroy gpu=1 id=19 start=1 = 0\n"
		"nvmlDeviceCreateGpuInstanceWithPlacement gpu=1 id=14 start=0 "
		"size=2 = 0\n"
		"nvmlGpuInstanceCreateComputeInstance gpu=1 gi_start=0 "
		"ci_profile=1 = 0\n"
		"nvmlDeviceCreateGpuInstanceWithPlacement gpu=1 id=14 start=2 "
		"size=2 = 0\n"
		"nvmlGpuInstanceCreateComputeInstance gpu=1 gi_start=2 "
		"ci_profile=1 = 0\n");
	free(log);
	assert_int_equal(read_gpu(1, h, &l), 0);
	int got[GF_MIG_MAX_PROFILES] = { 0 };
	for (int i = 0; i < l.n; i++) {
		got[l.inst[i].profile]++;
		if (l.inst[i].profile == p3)
			assert_int_equal(l.inst[i].start, 4);
	}
	assert_int_equal(got[p1], 0);
	assert_int_equal(got[p2], 2);
	assert_int_equal(got[p3], 1);

	/* all-1g on GPUs 1 and 2: each has a busy instance the config lacks;
	 * no call is made and the message names it */
	fresh_fake(MIG_H100);
	assert_int_not_equal(apply_yaml(apply_cfgs, "all-1g", false, &e), 0);
	assert_non_null(strstr(e.msg, "2 GPUs failed"));
	assert_non_null(strstr(e.msg, "the busy 3g.40gb@4 is not in the "
				      "config"));
	assert_non_null(strstr(e.msg, "cfg.yaml: config 'all-1g'"));
	log = calls();
	assert_string_equal(log, "");
	free(log);
	assert_int_equal(read_gpu(1, h, &l), 0);
	assert_int_equal(l.n, 3);

	/* MIG off on GPU 2 would destroy its busy 7g: refused, no call */
	fresh_fake(MIG_H100);
	assert_int_not_equal(apply_yaml(apply_cfgs, "off", false, &e), 0);
	assert_non_null(strstr(e.msg, "busy 7g.80gb@0"));
	assert_non_null(strstr(e.msg, "cfg.yaml:16: config 'off': GPU 2:"));
	log = calls();
	assert_string_equal(log, "");
	free(log);
	assert_int_equal(read_gpu(2, h, &l), 0);
	assert_int_equal(l.n, 1);

	/* a dry run calls nothing that changes the GPU */
	fresh_fake(MIG_H100);
	assert_int_equal(apply_yaml(apply_cfgs, "two-2g", true, &e), 0);
	log = calls();
	assert_string_equal(log, "");
	free(log);
	assert_int_equal(read_gpu(1, h, &l), 0);
	assert_int_equal(l.n, 3);
	assert_int_equal(read_gpu(0, h, &l), -1); /* still MIG off */
}

/* Idle instances are destroyed (compute instance first) when the config
 * changes; applying the same config again changes nothing. */
static void test_apply_reconfigures_idle_gpu(void **state)
{
	(void)state;
	const struct gf_mig_model *h = gf_mig_model_by_id("h100-80gb");
	struct gf_err e;
	struct gf_mig_layout l;
	fresh_fake(MIG_H100);
	assert_int_equal(apply_yaml(apply_cfgs, "seven", false, &e), 0);
	char log[128];
	snprintf(log, sizeof(log), "%s/calls.log", tmpdir);
	unlink(log);
	assert_int_equal(apply_yaml(apply_cfgs, "seven", false, &e), 0);
	char *c = calls();
	assert_string_equal(c, ""); /* already there */
	free(c);
	assert_int_equal(apply_yaml(apply_cfgs, "big", false, &e), 0);
	c = calls();
	assert_int_equal(test_count(c, "nvmlComputeInstanceDestroy gpu=0"), 7);
	assert_int_equal(test_count(c, "nvmlGpuInstanceDestroy gpu=0"), 7);
	assert_int_equal(test_count(c, "SetMigMode"), 0);
	/* destroys before creates, each CI before its GI */
	const char *last_destroy = c, *q = c;
	while ((q = strstr(q, "Destroy")))
		last_destroy = q++;
	assert_true(strstr(c, "WithPlacement") > last_destroy);
	assert_true(strstr(c, "nvmlComputeInstanceDestroy gpu=0 gi_start=3") <
		    strstr(c, "nvmlGpuInstanceDestroy gpu=0 id=19 start=3"));
	assert_non_null(strstr(c, "WithPlacement gpu=0 id=5 start=0 size=4 "
				  "= 0\n"));
	assert_non_null(strstr(c, "WithPlacement gpu=0 id=9 start=4 size=4 "
				  "= 0\n"));
	assert_true(strstr(c, "id=5 start=0") < strstr(c, "id=9 start=4"));
	free(c);
	assert_int_equal(read_gpu(0, h, &l), 0);
	assert_int_equal(l.n, 2);
}

/* ---- the node's MIG state, and one GPU's layout ---- */

#define MIG_IDLE "tests/fixtures/nvml/mig-idle.nvml"

/* The instance of s's GPU g at `start`, or fail. */
static const struct gf_mig_gi_state *gi_at(const struct gf_mig_gpu_state *g,
					   int start)
{
	for (int i = 0; i < g->n; i++)
		if (g->gi[i].inst.start == start)
			return &g->gi[i];
	fail_msg("GPU %u: no instance at %d", g->index, start);
	return &g->gi[0]; /* not reached */
}

/* The fake's MIG device UUID for GPU instance `id` of GPU `gpu`. */
static void mig_uuid(char *out, size_t size, unsigned gpu, unsigned id)
{
	snprintf(out, size, "MIG-fa4e0000-%04x-4000-8000-%012x", gpu, id);
}

/* Every GPU of the fixture: identity, model, MIG mode, instances with
 * their ids, busy flags and MIG device UUIDs (the fake numbers GPU
 * instances in fixture order). */
static void test_state_read(void **state)
{
	(void)state;
	fresh_fake(MIG_H100);
	struct gf_mig_node_state s;
	struct gf_err e;
	assert_int_equal(gf_mig_state_read(&s, &e), 0);
	assert_int_equal(s.ngpus, 4);
	const struct gf_mig_model *h = gf_mig_model_by_id("h100-80gb");
	const struct gf_mig_gpu_state *g = &s.gpus[0];
	assert_string_equal(g->uuid,
			    "GPU-5e1f0c2a-7d3b-4c8e-9a60-000000000100");
	assert_string_equal(g->busid, "00000000:18:00.0");
	assert_int_equal(g->devid, 0x2330);
	assert_ptr_equal(g->model, h);
	assert_true(g->mig_supported);
	assert_int_equal(g->mode, 0);
	assert_int_equal(g->n, 0);
	assert_string_equal(g->error, "");
	/* GPU 1: busy 3g.40gb at 4 (GPU instance 1), idle 1g.10gb at 0, 1 */
	g = &s.gpus[1];
	assert_int_equal(g->mode, NVML_DEVICE_MIG_ENABLE);
	assert_int_equal(g->pending, NVML_DEVICE_MIG_ENABLE);
	assert_int_equal(g->n, 3);
	char want[64];
	static const struct {
		int start;
		const char *profile;
		unsigned id;
		bool busy;
	} gis[3] = { { 4, "3g.40gb", 1, true },
		     { 0, "1g.10gb", 2, false },
		     { 1, "1g.10gb", 3, false } };
	for (int k = 0; k < 3; k++) {
		const struct gf_mig_gi_state *gi = gi_at(g, gis[k].start);
		assert_string_equal(gi->profile, gis[k].profile);
		assert_string_equal(h->profiles[gi->inst.profile].name,
				    gis[k].profile);
		assert_int_equal(gi->id, gis[k].id);
		assert_int_equal(gi->inst.busy, gis[k].busy);
		assert_int_equal(gi->nmig, 1);
		mig_uuid(want, sizeof(want), 1, gis[k].id);
		assert_string_equal(gi->uuid, want);
	}
	assert_true(gf_mig_state_is_busy(g));
	assert_int_equal(g->profile_id[gf_mig_profile_find(h, "3g.40gb")], 9);
	struct gf_mig_layout l;
	gf_mig_state_layout(g, &l);
	assert_int_equal(l.n, 3);
	/* GPU 2: a busy 7g.80gb */
	g = &s.gpus[2];
	assert_int_equal(g->n, 1);
	assert_true(g->gi[0].inst.busy);
	mig_uuid(want, sizeof(want), 2, 1);
	assert_string_equal(g->gi[0].uuid, want);
	/* GPU 3: an L4, no MIG model, no MIG mode */
	g = &s.gpus[3];
	assert_null(g->model);
	assert_false(g->mig_supported);
	assert_int_equal(g->n, 0);
	assert_string_equal(g->uuid,
			    "GPU-5e1f0c2a-7d3b-4c8e-9a60-000000000103");
	gf_mig_state_release(&s);
	assert_null(s.gpus);
}

/* The fake answers consistently: a GPU instance has a MIG device (and a
 * UUID) once it has a compute instance, none before; each MIG device
 * names its GPU instance's id; the state read sees the same. */
static void test_state_mig_devices(void **state)
{
	(void)state;
	fresh_fake(MIG_H100);
	const struct gf_nvml *nv;
	struct gf_err e;
	assert_int_equal(gf_nvml_open(&nv, &e), 0);
	nvmlDevice_t dev;
	assert_int_equal(nv->nvmlDeviceGetHandleByIndex(0, &dev), NVML_SUCCESS);
	nvmlReturn_t act;
	assert_int_equal(nv->nvmlDeviceSetMigMode(dev, 1, &act), NVML_SUCCESS);
	nvmlGpuInstancePlacement_t pl = { 0, 4 };
	nvmlGpuInstance_t gi;
	assert_int_equal(nv->nvmlDeviceCreateGpuInstanceWithPlacement(
				 dev, 5 /* 4g.40gb */, &pl, &gi),
			 NVML_SUCCESS);
	nvmlDevice_t mig;
	assert_int_equal(nv->nvmlDeviceGetMigDeviceHandleByIndex(dev, 0, &mig),
			 NVML_ERROR_NOT_FOUND);
	struct gf_mig_gpu_state g;
	assert_int_equal(gf_mig_state_read_gpu(nv, 0, &g, &e), 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.gi[0].nmig, 0);
	assert_string_equal(g.gi[0].uuid, "");
	nvmlComputeInstanceProfileInfo_t ci;
	nvmlComputeInstance_t cih;
	assert_int_equal(
		nv->nvmlGpuInstanceGetComputeInstanceProfileInfo(gi, 3, 0, &ci),
		NVML_SUCCESS);
	assert_int_equal(
		nv->nvmlGpuInstanceCreateComputeInstance(gi, ci.id, &cih),
		NVML_SUCCESS);
	assert_int_equal(nv->nvmlDeviceGetMigDeviceHandleByIndex(dev, 0, &mig),
			 NVML_SUCCESS);
	unsigned id;
	char uuid[GF_MIG_UUID_SIZE], want[64];
	assert_int_equal(nv->nvmlDeviceGetGpuInstanceId(mig, &id),
			 NVML_SUCCESS);
	assert_int_equal(nv->nvmlDeviceGetUUID(mig, uuid, sizeof(uuid)),
			 NVML_SUCCESS);
	mig_uuid(want, sizeof(want), 0, id);
	assert_string_equal(uuid, want);
	assert_int_equal(gf_mig_state_refresh(nv, &g, &e), 0);
	assert_int_equal(g.gi[0].id, id);
	assert_int_equal(g.gi[0].nmig, 1);
	assert_string_equal(g.gi[0].uuid, want);
	assert_false(g.gi[0].inst.busy);
	assert_int_equal(gf_mig_state_read_gpu(nv, 9, &g, &e), GF_ENVML);
	assert_null(g.dev);
	gf_nvml_close();
}

/* A GPU whose instances break our table's rules (a driver whose table
 * differs) has its error set; the others are read. */
static void test_state_bad_gpu(void **state)
{
	(void)state;
	char path[128];
	snprintf(path, sizeof(path), "%s/odd.nvml", tmpdir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("profileset odd\n"
	      "gi_profile 0 19 1 1 0,1,2,3,4,5,6,7 8\n"
	      "gpu 00000000:18:00.0\n"
	      "pci_device_id 0x233010DE\nmig 1 1\ngi_profiles odd\n"
	      "gi 19 7\n"
	      "gpu 00000000:19:00.0\n"
	      "pci_device_id 0x233010DE\nmig 1 1\ngi_profiles odd\n"
	      "gi 19 0 busy\n",
	      f);
	fclose(f);
	fresh_fake(path);
	struct gf_mig_node_state s;
	struct gf_err e;
	assert_int_equal(gf_mig_state_read(&s, &e), 0);
	assert_int_equal(s.ngpus, 2);
	assert_non_null(strstr(s.gpus[0].error, "GPU 0: the driver reports a "
						"layout our h100-80gb table "
						"rejects"));
	assert_int_equal(s.gpus[0].n, 0);
	assert_string_equal(s.gpus[1].error, "");
	assert_int_equal(s.gpus[1].n, 1);
	assert_true(s.gpus[1].gi[0].inst.busy);
	gf_mig_state_release(&s);
	/* apply refuses that GPU with the same words */
	struct gf_mig_layout l = { 0 };
	struct gf_buf log;
	gf_buf_init(&log, 1 << 16);
	assert_int_equal(gf_mig_apply_gpu(0, gf_mig_model_by_id("h100-80gb"),
					  &l, false, &log, &e),
			 GF_EINVAL);
	assert_non_null(strstr(e.msg, "table rejects"));
	gf_buf_release(&log);
	unlink(path);
}

/* "P@S P@S ..." as a layout of m. */
static struct gf_mig_layout layout_of(const struct gf_mig_model *m,
				      const char *text)
{
	struct gf_mig_layout l = { 0 };
	char buf[256], *save = NULL;
	snprintf(buf, sizeof(buf), "%s", text);
	for (char *t = strtok_r(buf, " ", &save); t;
	     t = strtok_r(NULL, " ", &save)) {
		char *at = strchr(t, '@');
		assert_non_null(at);
		*at = '\0';
		int p = gf_mig_profile_find(m, t);
		assert_true(p >= 0);
		l.inst[l.n++] = (struct gf_mig_instance){ (uint8_t)p,
							  (uint8_t)atoi(at + 1),
							  false };
	}
	return l;
}

static int apply_one(unsigned gpu, const char *text, bool dry,
		     struct gf_buf *log, struct gf_err *e)
{
	const struct gf_mig_model *h = gf_mig_model_by_id("h100-80gb");
	struct gf_mig_layout l = layout_of(h, text);
	gf_buf_reset(log);
	gf_err_clear(e);
	return gf_mig_apply_gpu(gpu, h, &l, dry, log, e);
}

/* One GPU to a given layout: instances in place kept, the rest
 * destroyed (compute instance first) and created largest first with
 * explicit placements; read back; again: nothing to do. */
static void test_apply_gpu_layout(void **state)
{
	(void)state;
	const struct gf_mig_model *h = gf_mig_model_by_id("h100-80gb");
	struct gf_buf log;
	gf_buf_init(&log, 1 << 16);
	struct gf_err e;
	struct gf_mig_layout l;
	fresh_fake(MIG_IDLE);
	assert_int_equal(apply_one(0,
				   "1g.10gb@0 1g.10gb@1 1g.10gb@2 1g.10gb@3 "
				   "3g.40gb@4",
				   false, &log, &e),
			 0);
	char *c = calls();
	assert_string_equal(c, "nvmlDeviceCreateGpuInstanceWithPlacement "
			       "gpu=0 id=19 start=2 size=1 = 0\n"
			       "nvmlGpuInstanceCreateComputeInstance gpu=0 "
			       "gi_start=2 ci_profile=0 = 0\n"
			       "nvmlDeviceCreateGpuInstanceWithPlacement "
			       "gpu=0 id=19 start=3 size=1 = 0\n"
			       "nvmlGpuInstanceCreateComputeInstance gpu=0 "
			       "gi_start=3 ci_profile=0 = 0\n");
	free(c);
	assert_non_null(strstr(log.data, "verified: 5 instances as planned"));
	/* each instance a MIG device with its own UUID */
	struct gf_mig_node_state s;
	assert_int_equal(gf_mig_state_read(&s, &e), 0);
	assert_int_equal(s.gpus[0].n, 5);
	char want[64];
	mig_uuid(want, sizeof(want), 0, 4); /* the fixture made ids 1-3 */
	assert_string_equal(gi_at(&s.gpus[0], 2)->uuid, want);
	for (int i = 0; i < 5; i++)
		for (int j = 0; j < i; j++)
			assert_string_not_equal(s.gpus[0].gi[i].uuid,
						s.gpus[0].gi[j].uuid);
	gf_mig_state_release(&s);

	/* 4g + 3g: the four 1g go, the 3g at 4 stays */
	char path[128];
	snprintf(path, sizeof(path), "%s/calls.log", tmpdir);
	unlink(path);
	assert_int_equal(apply_one(0, "3g.40gb@4 4g.40gb@0", false, &log, &e),
			 0);
	c = calls();
	assert_int_equal(test_count(c, "nvmlComputeInstanceDestroy gpu=0"), 4);
	assert_int_equal(test_count(c, "nvmlGpuInstanceDestroy gpu=0 id=19"),
			 4);
	assert_int_equal(test_count(c, "id=9 "), 0);
	assert_true(strstr(c, "nvmlComputeInstanceDestroy gpu=0 gi_start=3") <
		    strstr(c, "nvmlGpuInstanceDestroy gpu=0 id=19 start=3"));
	assert_non_null(strstr(c, "WithPlacement gpu=0 id=5 start=0 size=4 "
				  "= 0\n"));
	assert_int_equal(test_count(c, "WithPlacement"), 1);
	free(c);
	assert_int_equal(read_gpu(0, h, &l), 0);
	assert_int_equal(l.n, 2);
	unlink(path);
	assert_int_equal(apply_one(0, "4g.40gb@0 3g.40gb@4", false, &log, &e),
			 0);
	c = calls();
	assert_string_equal(c, "");
	free(c);

	/* an empty layout: every instance destroyed, MIG stays on */
	assert_int_equal(apply_one(0, "", false, &log, &e), 0);
	assert_int_equal(read_gpu(0, h, &l), 0);
	assert_int_equal(l.n, 0);

	/* a dry run lists the calls and makes none */
	fresh_fake(MIG_IDLE);
	assert_int_equal(apply_one(1, "7g.80gb@0", true, &log, &e), 0);
	assert_non_null(strstr(log.data, "nvmlDeviceCreateGpuInstanceWith"
					 "Placement(gpu=1, profile=7g.80gb id "
					 "0, start=0, size=8)"));
	c = calls();
	assert_string_equal(c, "");
	free(c);
	assert_int_equal(read_gpu(1, h, &l), 0);
	assert_int_equal(l.n, 0);
	gf_buf_release(&log);
}

/* Refusals make no call: a busy instance (a process may have started
 * since the layout was proposed), MIG off, a GPU of another model or
 * none, no such GPU, a layout that breaks the rules. */
static void test_apply_gpu_refusals(void **state)
{
	(void)state;
	struct gf_buf log;
	gf_buf_init(&log, 1 << 16);
	struct gf_err e;
	static const struct {
		unsigned gpu;
		const char *layout;
		int rc;
		const char *msg;
	} cases[] = {
		{ 1, "3g.40gb@4 1g.10gb@0 1g.10gb@1 1g.10gb@2", GF_ECONFLICT,
		  "GPU 1: the 3g.40gb@4 (GPU instance 1) is busy" },
		{ 2, "7g.80gb@0", GF_ECONFLICT, "GPU 2: the 7g.80gb@0" },
		{ 0, "7g.80gb@0", GF_ECONFLICT, "GPU 0: MIG mode is off" },
		{ 3, "7g.80gb@0", GF_EINVAL,
		  "GPU 3: the layout is for a h100-80gb, the GPU is not a "
		  "MIG GPU gpufleet knows" },
		{ 7, "7g.80gb@0", GF_ENOTFOUND, "GPU 7: no such GPU" },
		{ 0, "3g.40gb@2", GF_EINVAL, "GPU 0: the h100-80gb layout: " },
		{ 0, "7g.80gb@0 1g.10gb@0", GF_EINVAL, "GPU 0: the h100-80gb" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fresh_fake(MIG_H100);
		int rc = apply_one(cases[i].gpu, cases[i].layout, false, &log,
				   &e);
		if (rc != cases[i].rc || !strstr(e.msg, cases[i].msg))
			print_message("case %zu: %d '%s'\n", i, rc, e.msg);
		assert_int_equal(rc, cases[i].rc);
		assert_non_null(strstr(e.msg, cases[i].msg));
		char *c = calls();
		assert_string_equal(c, "");
		free(c);
	}
	/* a layout for another model */
	fresh_fake(MIG_IDLE);
	const struct gf_mig_model *a = gf_mig_model_by_id("a100-80gb");
	struct gf_mig_layout l = { 0 };
	assert_int_equal(gf_mig_apply_gpu(1, a, &l, false, &log, &e),
			 GF_EINVAL);
	assert_non_null(strstr(e.msg, "for a a100-80gb, the GPU is a "
				      "h100-80gb"));
	gf_buf_release(&log);
}

/* The target on its own: exact counts, busy kept, idle kept when they
 * can be, and why not when not. */
static void test_reach(void **state)
{
	(void)state;
	const struct gf_mig_model *h = gf_mig_model_by_id("h100-80gb");
	int p1 = gf_mig_profile_find(h, "1g.10gb");
	int p2 = gf_mig_profile_find(h, "2g.20gb");
	int p3 = gf_mig_profile_find(h, "3g.40gb");
	int p7 = gf_mig_profile_find(h, "7g.80gb");
	struct gf_mig_layout cur = {
		3,
		{ { (uint8_t)p3, 4, true },
		  { (uint8_t)p1, 0, false },
		  { (uint8_t)p1, 3, false } },
	};
	int counts[GF_MIG_MAX_PROFILES] = { 0 };
	counts[p3] = 1;
	counts[p1] = 1;
	counts[p2] = 1;
	struct gf_mig_layout out;
	struct gf_mig_instance busy;
	/* 2g fits at 0 (losing 1g@0) or at 2 (losing 1g@3): one 1g kept */
	assert_int_equal(gf_mig_reach(h, &cur, counts, &out, &busy), 0);
	assert_int_equal(out.n, 3);
	int kept = 0;
	for (int i = 0; i < out.n; i++)
		for (int k = 0; k < cur.n; k++)
			kept += out.inst[i].profile == cur.inst[k].profile &&
				out.inst[i].start == cur.inst[k].start;
	assert_int_equal(kept, 2);		   /* the busy 3g and one 1g */
	assert_int_equal(out.inst[0].profile, p3); /* creation order */
	assert_true(out.inst[0].busy);
	/* a 7g cannot be reached around the busy 3g */
	memset(counts, 0, sizeof(counts));
	counts[p7] = 1;
	assert_int_equal(gf_mig_reach(h, &cur, counts, &out, &busy), GF_EINVAL);
	assert_int_equal(busy.profile, p3);
	/* 3 x 3g never fits */
	memset(counts, 0, sizeof(counts));
	counts[p3] = 3;
	assert_int_equal(gf_mig_reach(h, &cur, counts, &out, &busy),
			 GF_ENOTFOUND);
	/* two 3g: the busy one and one at 0, the idle 1g go */
	counts[p3] = 2;
	assert_int_equal(gf_mig_reach(h, &cur, counts, &out, &busy), 0);
	assert_int_equal(out.n, 2);
}

/* The fake driver (not gpufleet): with no explicit placement it puts an
 * instance at the highest free start, so small ones first then a 3g
 * fails, as the MIG user guide documents for A100 (-cgi 19,19,14,9), and
 * the guide's order (3g first) works.  gpufleet never relies on it: it
 * places explicitly, largest first (test_apply_every_valid_config_...). */
static void test_fake_nvml_places_like_the_driver(void **state)
{
	(void)state;
	const char *lib = getenv("GPUFLEET_NVML_LIBRARY");
	void *dl = lib ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL;
	if (!dl) {
		print_message("fake NVML not found\n");
		skip();
	}
	fresh_fake(MIG_H100);
	typedef nvmlReturn_t (*init_t)(void);
	typedef nvmlReturn_t (*handle_t)(unsigned, nvmlDevice_t *);
	typedef nvmlReturn_t (*mode_t_)(nvmlDevice_t, unsigned, nvmlReturn_t *);
	typedef nvmlReturn_t (*create_t)(nvmlDevice_t, unsigned,
					 nvmlGpuInstance_t *);
	typedef nvmlReturn_t (*info_t)(nvmlGpuInstance_t,
				       nvmlGpuInstanceInfo_t *);
	init_t init;
	handle_t handle;
	mode_t_ setmode;
	create_t create;
	info_t info;
	/* POSIX: data and function pointers convert (see dlsym(3)) */
	void *sym = dlsym(dl, "nvmlInit_v2");
	memcpy(&init, &sym, sizeof(sym));
	sym = dlsym(dl, "nvmlDeviceGetHandleByIndex_v2");
	memcpy(&handle, &sym, sizeof(sym));
	sym = dlsym(dl, "nvmlDeviceSetMigMode");
	memcpy(&setmode, &sym, sizeof(sym));
	sym = dlsym(dl, "nvmlDeviceCreateGpuInstance");
	memcpy(&create, &sym, sizeof(sym));
	sym = dlsym(dl, "nvmlGpuInstanceGetInfo");
	memcpy(&info, &sym, sizeof(sym));
	assert_non_null(create);
	assert_non_null(info);
	assert_int_equal(init(), NVML_SUCCESS);
	nvmlDevice_t d;
	nvmlReturn_t act;
	nvmlGpuInstance_t gi;
	nvmlGpuInstanceInfo_t gii;
	assert_int_equal(handle(0, &d), NVML_SUCCESS);
	assert_int_equal(setmode(d, 1, &act), NVML_SUCCESS);
	static const struct {
		unsigned id;
		int start; /* -1: refused */
	} small_first[] = { { 19, 6 }, { 19, 5 }, { 14, 2 }, { 9, -1 } },
	  guide[] = { { 9, 4 }, { 19, 3 }, { 14, 0 }, { 19, 2 } };
	for (int i = 0; i < 4; i++) {
		nvmlReturn_t r = create(d, small_first[i].id, &gi);
		if (small_first[i].start < 0) {
			assert_int_equal(r, NVML_ERROR_INSUFFICIENT_RESOURCES);
			continue;
		}
		assert_int_equal(r, NVML_SUCCESS);
		assert_int_equal(info(gi, &gii), NVML_SUCCESS);
		assert_int_equal(gii.placement.start, small_first[i].start);
	}
	/* a fresh GPU (the fixture reloaded): 3g first works */
	fresh_fake(MIG_H100);
	assert_int_equal(init(), NVML_SUCCESS);
	assert_int_equal(handle(0, &d), NVML_SUCCESS);
	assert_int_equal(setmode(d, 1, &act), NVML_SUCCESS);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(create(d, guide[i].id, &gi), NVML_SUCCESS);
		assert_int_equal(info(gi, &gii), NVML_SUCCESS);
		assert_int_equal(gii.placement.start, guide[i].start);
	}
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
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/gf-test-mig-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reach),
		cmocka_unit_test(test_apply_every_valid_config_on_idle_gpu),
		cmocka_unit_test(test_apply_around_busy_instances),
		cmocka_unit_test(test_apply_reconfigures_idle_gpu),
		cmocka_unit_test(test_state_read),
		cmocka_unit_test(test_state_mig_devices),
		cmocka_unit_test(test_state_bad_gpu),
		cmocka_unit_test(test_apply_gpu_layout),
		cmocka_unit_test(test_apply_gpu_refusals),
		cmocka_unit_test(test_fake_nvml_places_like_the_driver),
	};
	int rc = cmocka_run_group_tests_name("mig_apply", tests, NULL, NULL);
	char path[128];
	snprintf(path, sizeof(path), "%s/calls.log", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/cfg.yaml", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	return rc;
}
