/*
 * test_k8s_decide.c - the extender's decisions (src/k8s/decide.c) and
 * the core's calls they make (gf_ctl_add_on, gf_ctl_victims, ...), on
 * small clusters whose answers are derived by hand in the comments (the
 * DGX-1V's NVLink quads, MIG instances, a share where FGD puts it, the
 * fewest victims).  test_k8s_answers.c has the verdicts and scores kept
 * between calls (k8s/answers.h), test_k8s.c the pods and the wire.
 */
#include "k8s_decide_helpers.h"

/* ---- decisions ---------------------------------------------------------- */

/*
 * Two DGX-1V nodes.  "scattered": jobs on GPUs 2, 3, 6, 7, so 0, 1, 4, 5
 * are free: four GPUs, but 0-5 and 1-4 have no NVLink (SYS), so no free
 * four are all NVLink-connected.  "quad": jobs on 0-3, so 4-7, an NVLink
 * quad, are free.  A 4-GPU pod: filtered away from "scattered" (it could
 * fit once work leaves: FailedNodes), kept on "quad"; with
 * gpufleet.io/gpu-topology: any, both.  A 2-GPU pod fits on "scattered"
 * (0-1 is an NV1 pair).  "l40s" (8 GPUs, no known topology): any four.
 * "cpu": no GPU, unresolvable.  Bound, the 4-GPU pod takes 4-7.
 */
static void test_decide_nvlink(void **state)
{
	(void)state;
	struct gf_ctl *ctl = ctl_new(GF_POLICY_FGD);
	struct gf_gpu_topo t;
	dgx1v_topo(&t);
	join(ctl, "scattered", 8, "v100-32gb", &t, NULL);
	join(ctl, "quad", 8, "v100-32gb", &t, NULL);
	join(ctl, "l40s", 8, "l40s", NULL, NULL);
	join(ctl, "cpu", 0, NULL, NULL, NULL);
	for (int g = 0; g < 4; g++) {
		int sg = g < 2 ? g + 2 : g + 4;
		run(ctl, "scattered", &sg, 1, 1000, NULL, -1, NULL);
		run(ctl, "quad", &g, 1, 1000, NULL, -1, NULL);
	}
	struct gf_k8s_pod p;
	struct gf_k8s_ask a;
	struct gf_k8s_verdict v;
	pod_of(&p, "train-0", "\"nvidia.com/gpu\": \"4\"", "", "");
	ask_of(ctl, &p, &a);
	assert_int_equal(a.kind, GF_K8S_ASK_WHOLE);
	verdict(ctl, &a, "scattered", &v);
	assert_int_equal(v.kind, GF_K8S_NO_ROOM);
	assert_string_equal(v.why,
			    "gpufleet: 4 free GPUs but no 4 NVLink-connected");
	verdict(ctl, &a, "quad", &v);
	assert_int_equal(v.kind, GF_K8S_FITS);
	verdict(ctl, &a, "l40s", &v);
	assert_int_equal(v.kind, GF_K8S_FITS);
	verdict(ctl, &a, "cpu", &v);
	assert_int_equal(v.kind, GF_K8S_NEVER);
	assert_string_equal(v.why, "gpufleet: node has no GPUs");
	verdict(ctl, &a, "nowhere", &v);
	assert_int_equal(v.kind, GF_K8S_NEVER);
	assert_int_equal(score(ctl, &a, "scattered"), 0);
	assert_true(score(ctl, &a, "quad") > 0);
	/* no linking asked for */
	pod_of(&p, "train-1", "\"nvidia.com/gpu\": \"4\"", "",
	       "\"annotations\": {\"gpufleet.io/gpu-topology\": \"any\"}");
	ask_of(ctl, &p, &a);
	verdict(ctl, &a, "scattered", &v);
	assert_int_equal(v.kind, GF_K8S_FITS);
	/* two GPUs: 0-1 is NVLink */
	pod_of(&p, "train-2", "\"nvidia.com/gpu\": \"2\"", "", "");
	ask_of(ctl, &p, &a);
	verdict(ctl, &a, "scattered", &v);
	assert_int_equal(v.kind, GF_K8S_FITS);
	/* nine GPUs: never on an 8-GPU node */
	pod_of(&p, "train-3", "\"nvidia.com/gpu\": \"9\"", "", "");
	ask_of(ctl, &p, &a);
	verdict(ctl, &a, "quad", &v);
	assert_int_equal(v.kind, GF_K8S_NEVER);
	assert_string_equal(v.why,
			    "gpufleet: node has 8 GPUs, the pod asks for 9");
	/* bound to "quad": the engine takes the quad 4-7 */
	pod_of(&p, "train-0", "\"nvidia.com/gpu\": \"4\"", "", "");
	ask_of(ctl, &p, &a);
	int q = gf_ctl_node_find(ctl, "quad");
	struct gf_job *j =
		gf_k8s_job_new(ctl, &p, &a, q, ++next_seq, "pods", 1000);
	struct gf_err e;
	assert_int_equal(gf_ctl_add_on(ctl, j, q, 1000, &e), 0);
	check(ctl);
	const struct gf_job *got = gf_ctl_job(ctl, j->id);
	assert_int_equal(got->state, GF_JOB_RUNNING);
	assert_int_equal(got->place[0].ngpus, 4);
	for (int g = 0; g < 4; g++)
		assert_int_equal(got->place[0].gpus[g], 4 + g);
	/* nothing is left there: a second such pod is refused, nothing
	 * taken */
	int njobs = gf_ctl_njobs(ctl);
	struct gf_job *j2 =
		gf_k8s_job_new(ctl, &p, &a, q, ++next_seq, "pods", 1000);
	assert_int_equal(gf_ctl_add_on(ctl, j2, q, 1000, &e), GF_ENOTFOUND);
	assert_int_equal(gf_ctl_njobs(ctl), njobs);
	check(ctl);
	gf_job_release(j2);
	gf_free(j2);
	/* cancelled (the pod deleted): the GPUs are free again */
	assert_int_equal(gf_ctl_cancel(ctl, got->id, 2000, &e), 0);
	check(ctl);
	verdict(ctl, &a, "quad", &v);
	assert_int_equal(v.kind, GF_K8S_FITS);
	gf_ctl_free(ctl);
}

/* The MIG layout of hgx-b's GPU 6: seven 1g.10gb instances. */
static struct gf_ctl_node_spec mig_spec(void)
{
	struct gf_ctl_node_spec s = { .cpu_milli = 96000,
				      .memory_mib = 786432,
				      .ngpus = 8 };
	snprintf(s.mig_model, sizeof(s.mig_model), "h100-80gb");
	for (int k = 0; k < 7; k++) {
		s.mig[s.nmig].gpu = 6;
		s.mig[s.nmig].start = k;
		snprintf(s.mig[s.nmig].profile, GF_MIG_PROFILE_MAX, "1g.10gb");
		s.nmig++;
	}
	return s;
}

/*
 * "mig-full": all seven 1g.10gb instances in use; "mig-one": six in
 * use, the one at slice 4 free; "plain": no MIG.  A 1g.10gb pod: only
 * "mig-one"; "mig-full" may free one (FailedNodes), "plain" never.
 * Bound, it takes the instance at slice 4.
 */
static void test_decide_mig(void **state)
{
	(void)state;
	struct gf_ctl *ctl = ctl_new(GF_POLICY_FGD);
	struct gf_ctl_node_spec s = mig_spec();
	join(ctl, "mig-full", 8, "h100-sxm", NULL, &s);
	join(ctl, "mig-one", 8, "h100-sxm", NULL, &s);
	join(ctl, "plain", 8, "h100-sxm", NULL, NULL);
	int six = 6;
	for (int k = 0; k < 7; k++) {
		run(ctl, "mig-full", &six, 1, 0, "1g.10gb", k, NULL);
		if (k != 4)
			run(ctl, "mig-one", &six, 1, 0, "1g.10gb", k, NULL);
	}
	struct gf_k8s_pod p;
	struct gf_k8s_ask a;
	struct gf_k8s_verdict v;
	pod_of(&p, "infer-0", "\"nvidia.com/mig-1g.10gb\": \"1\"", "", "");
	ask_of(ctl, &p, &a);
	assert_int_equal(a.kind, GF_K8S_ASK_MIG);
	verdict(ctl, &a, "mig-full", &v);
	assert_int_equal(v.kind, GF_K8S_NO_ROOM);
	assert_string_equal(v.why, "gpufleet: no 1g.10gb instance free (7 in "
				   "use or on unhealthy GPUs)");
	verdict(ctl, &a, "mig-one", &v);
	assert_int_equal(v.kind, GF_K8S_FITS);
	verdict(ctl, &a, "plain", &v);
	assert_int_equal(v.kind, GF_K8S_NEVER);
	assert_string_equal(v.why,
			    "gpufleet: no 1g.10gb instance on this node");
	/* packing: the last free instance scores the most */
	assert_int_equal(score(ctl, &a, "mig-one"), 10);
	int free;
	struct gf_ctl_mig first;
	assert_int_equal(gf_ctl_mig_count(ctl, gf_ctl_node_find(ctl, "mig-one"),
					  "1g.10gb", &free, &first),
			 7);
	assert_int_equal(free, 1);
	assert_int_equal(first.start, 4);
	int i = gf_ctl_node_find(ctl, "mig-one");
	struct gf_job *j =
		gf_k8s_job_new(ctl, &p, &a, i, ++next_seq, "pods", 1000);
	struct gf_err e;
	assert_int_equal(gf_ctl_add_on(ctl, j, i, 1000, &e), 0);
	check(ctl);
	const struct gf_job *got = gf_ctl_job(ctl, j->id);
	assert_int_equal(got->place[0].gpus[0], 6);
	assert_int_equal(got->place[0].mig_start, 4);
	verdict(ctl, &a, "mig-one", &v);
	assert_int_equal(v.kind, GF_K8S_NO_ROOM);
	/* an unhealthy GPU's instances are not free */
	assert_int_equal(gf_ctl_cancel(ctl, got->id, 2000, &e), 0);
	assert_int_equal(gf_ctl_gpu_health(ctl, i, 6, false, "xid 79", &e), 0);
	verdict(ctl, &a, "mig-one", &v);
	assert_int_equal(v.kind, GF_K8S_NO_ROOM);
	gf_ctl_free(ctl);
}

/* The shares cluster: "s-free" all free; "s-exact" GPU 0 with 250 left
 * (a 750 share on it), the rest taken whole; "s-part" GPU 0 with 600
 * left, the rest free. */
static struct gf_ctl *shares_ctl(void)
{
	struct gf_ctl *ctl = ctl_new(GF_POLICY_FGD);
	join(ctl, "s-free", 8, "a100-80gb", NULL, NULL);
	join(ctl, "s-exact", 8, "a100-80gb", NULL, NULL);
	join(ctl, "s-part", 8, "a100-80gb", NULL, NULL);
	int zero = 0;
	run(ctl, "s-exact", &zero, 1, 750, NULL, -1, NULL);
	int rest[7] = { 1, 2, 3, 4, 5, 6, 7 };
	run(ctl, "s-exact", rest, 7, 1000, NULL, -1, NULL);
	run(ctl, "s-part", &zero, 1, 400, NULL, -1, NULL);
	return ctl;
}

/*
 * A 250-milli share lands where FGD says: the node the core's own pass
 * puts the same request on (a job of 250 milli), on the same GPU.  By
 * hand: on "s-exact" it fills GPU 0's 250 left, and the node has no
 * free GPU left to fragment (F 0 after), the largest drop; so the
 * extender's best score goes to "s-exact", and bound there, GPU 0.
 */
static void test_decide_share_fgd(void **state)
{
	(void)state;
	struct gf_ctl *ref = shares_ctl();
	struct gf_job *j = gf_calloc(1, sizeof(*j));
	j->seq = ++next_seq;
	snprintf(j->id, sizeof(j->id), "j%llu", (unsigned long long)j->seq);
	snprintf(j->spec.team, sizeof(j->spec.team), "ml");
	snprintf(j->spec.class_name, sizeof(j->spec.class_name), "pods");
	j->spec.replicas = 1;
	j->spec.gpu_milli = 250;
	j->state = GF_JOB_PENDING;
	j->submitted_ms = 100;
	j->block = -1;
	struct gf_err e;
	assert_int_equal(gf_ctl_add(ref, j, &e), 0);
	assert_int_equal(gf_ctl_schedule(ref, 500, NULL), 0);
	const struct gf_job *placed = gf_ctl_job(ref, j->id);
	assert_int_equal(placed->state, GF_JOB_RUNNING);
	assert_string_equal(placed->place[0].node_name, "s-exact");
	int fgd_gpu = placed->place[0].gpus[0];
	assert_int_equal(fgd_gpu, 0);

	struct gf_ctl *ctl = shares_ctl();
	struct gf_k8s_pod p;
	struct gf_k8s_ask a;
	pod_of(&p, "share-0", "\"gpufleet.io/gpu-milli\": \"250\"", "", "");
	ask_of(ctl, &p, &a);
	assert_int_equal(a.kind, GF_K8S_ASK_SHARE);
	static const char *const nodes[] = { "s-free", "s-exact", "s-part" };
	int best = -1, best_score = -1;
	for (int k = 0; k < 3; k++) {
		int sc = score(ctl, &a, nodes[k]);
		print_message("  %s: score %d\n", nodes[k], sc);
		if (sc > best_score) {
			best_score = sc;
			best = k;
		} else {
			assert_true(sc < best_score); /* no tie */
		}
	}
	assert_string_equal(nodes[best], placed->place[0].node_name);
	int i = gf_ctl_node_find(ctl, nodes[best]);
	struct gf_job *pj =
		gf_k8s_job_new(ctl, &p, &a, i, ++next_seq, "pods", 1000);
	assert_int_equal(gf_ctl_add_on(ctl, pj, i, 1000, &e), 0);
	check(ctl);
	assert_int_equal(gf_ctl_job(ctl, pj->id)->place[0].gpus[0], fgd_gpu);
	assert_int_equal(gf_ctl_job(ctl, pj->id)->place[0].gpu_milli, 250);
	gf_ctl_free(ctl);
	gf_ctl_free(ref);
}

static const char *const vuid[8] = { "u0", "u1", "u2", "u3",
				     "u4", "u5", "u6", "u7" };
static const char *vjob[8];

static const char *job_by_uid(void *arg, const char *uid)
{
	(void)arg;
	for (int g = 0; g < 8; g++)
		if (vjob[g] && !strcmp(uid, vuid[g]))
			return vjob[g];
	return NULL;
}

/*
 * A call's memo changes no score: over nodes in several states, some
 * alike (n-one-a and n-one-b differ in name, version and rank only),
 * each node's score through one memo shared by the call (asked twice
 * over) is the score with a memo of its own, whose policy score is the
 * core's gf_ctl_score itself.
 */
static void test_decide_memo_scores(void **state)
{
	(void)state;
	struct gf_ctl *ctl = ctl_new(GF_POLICY_FGD);
	static const char *const nodes[] = { "n-free", "n-one-a", "n-one-b",
					     "n-four", "n-share", "n-full" };
	for (int k = 0; k < 6; k++)
		join(ctl, nodes[k], 8, "a100-80gb", NULL, NULL);
	int zero = 0, four[4] = { 0, 1, 2, 3 },
	    all[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	run(ctl, "n-one-a", &zero, 1, 1000, NULL, -1, NULL);
	run(ctl, "n-one-b", &zero, 1, 1000, NULL, -1, NULL);
	run(ctl, "n-four", four, 4, 1000, NULL, -1, NULL);
	run(ctl, "n-share", &zero, 1, 300, NULL, -1, NULL);
	run(ctl, "n-full", all, 7, 1000, NULL, -1, NULL);
	static const char *const res[] = {
		"\"nvidia.com/gpu\": \"1\"",
		"\"nvidia.com/gpu\": \"2\"",
		"\"gpufleet.io/gpu-milli\": \"250\"",
		"\"gpufleet.io/gpu-milli\": \"800\"",
	};
	for (size_t r = 0; r < sizeof(res) / sizeof(res[0]); r++) {
		struct gf_k8s_pod p;
		struct gf_k8s_ask a;
		pod_of(&p, "memo-0", res[r], "", "");
		ask_of(ctl, &p, &a);
		struct gf_k8s_memo *m = gf_k8s_memo_new(ctl, &a, 6);
		for (int pass = 0; pass < 2; pass++)
			for (int k = 0; k < 6; k++) {
				int i = gf_ctl_node_find(ctl, nodes[k]);
				int own = score(ctl, &a, nodes[k]);
				int shared = gf_k8s_score(ctl, i, m);
				if (pass == 0)
					print_message("  %s on %s: %d\n",
						      res[r], nodes[k], own);
				assert_int_equal(shared, own);
			}
		gf_k8s_memo_free(m);
	}
	gf_ctl_free(ctl);
}

static void test_decide_victims(void **state)
{
	(void)state;
	struct gf_ctl *ctl = ctl_new(GF_POLICY_FGD);
	struct gf_gpu_topo t;
	dgx1v_topo(&t);
	int i = join(ctl, "cube", 8, "v100-32gb", &t, NULL);
	memset(vjob, 0, sizeof(vjob));
	for (int g = 2; g < 8; g++)
		vjob[g] = run(ctl, "cube", &g, 1, 1000, NULL, -1, NULL);
	struct gf_k8s_pod p;
	struct gf_k8s_ask a;
	pod_of(&p, "big", "\"nvidia.com/gpu\": \"4\"", "", "");
	ask_of(ctl, &p, &a);
	struct gf_k8s_memo *m = gf_k8s_memo_new(ctl, &a, 1);
	const char *cands[8] = { "u7", "u6", "u5", "u4", "u3", "u2", "zz" };
	int out[8];
	int n = gf_k8s_victims(ctl, i, m, cands, 7, job_by_uid, NULL, out);
	assert_int_equal(n, 2);
	bool got[8] = { false };
	for (int k = 0; k < n; k++)
		got[out[k]] = true;
	assert_true(got[4] && got[5]); /* u3 and u2 */
	/* without u2 */
	const char *c2[5] = { "u7", "u6", "u5", "u4", "u3" };
	n = gf_k8s_victims(ctl, i, m, c2, 5, job_by_uid, NULL, out);
	assert_int_equal(n, 4);
	for (int k = 0; k < n; k++)
		assert_true(out[k] <= 3); /* u7..u4 */
	/* only a pod we do not hold: no set */
	const char *c3[1] = { "zz" };
	assert_int_equal(
		gf_k8s_victims(ctl, i, m, c3, 1, job_by_uid, NULL, out),
		GF_ENOTFOUND);
	gf_k8s_memo_free(m);
	check(ctl); /* the search left nothing behind */
	gf_ctl_free(ctl);
}

/* A GPU model asked by GFD's product label or our annotation. */
static void test_decide_models(void **state)
{
	(void)state;
	struct gf_ctl *ctl = ctl_new(GF_POLICY_FGD);
	join(ctl, "h", 8, "h100-sxm", NULL, NULL);
	join(ctl, "l", 8, "l40s", NULL, NULL);
	struct gf_k8s_pod p;
	struct gf_k8s_ask a;
	struct gf_k8s_verdict v;
	pod_of(&p, "m0", "\"nvidia.com/gpu\": \"1\"",
	       "\"nvidia.com/gpu.product\": \"NVIDIA-H100-80GB-HBM3\"", "");
	ask_of(ctl, &p, &a);
	verdict(ctl, &a, "h", &v);
	assert_int_equal(v.kind, GF_K8S_FITS);
	verdict(ctl, &a, "l", &v);
	assert_int_equal(v.kind, GF_K8S_NEVER);
	assert_string_equal(v.why, "gpufleet: node's GPUs are l40s, the pod "
				   "asks for NVIDIA-H100-80GB-HBM3");
	pod_of(&p, "m1", "\"nvidia.com/gpu\": \"1\"", "",
	       "\"annotations\": {\"gpufleet.io/gpu-model\": \"l40s\"}");
	ask_of(ctl, &p, &a);
	verdict(ctl, &a, "h", &v);
	assert_int_equal(v.kind, GF_K8S_NEVER);
	verdict(ctl, &a, "l", &v);
	assert_int_equal(v.kind, GF_K8S_FITS);
	/* the job of a pod bound with a model constraint: the node's */
	int i = gf_ctl_node_find(ctl, "l");
	struct gf_job *j = gf_k8s_job_new(ctl, &p, &a, i, 7, "pods", 1000);
	assert_string_equal(j->spec.gpu_model, "l40s");
	gf_job_release(j);
	gf_free(j);
	gf_ctl_free(ctl);
}

/*
 * Every catalog model as GPU feature discovery labels it (its labeler
 * tests, NVIDIA/gpu-feature-discovery internal/lm/resource_test.go
 * TestGPUResourceLabeler: "no sharing" writes the NVML name with spaces
 * as '-', "shared appends suffix" adds -SHARED): a pod selecting that
 * product fits the model's nodes however they name it: "id" by the
 * catalog id (agents register it, from NVML), "alias" by a trace's name
 * (--nodes FILE: V100M32 is v100-32gb), "lab" by its id and a product
 * label of GFD's spelling (the label does not refuse it); "other" (the
 * next model) never.  A pod asking by id fits the labelled node too.
 */
static void test_decide_gfd_products(void **state)
{
	(void)state;
	int n = gf_catalog_count();
	for (int i = 0; i < n; i++) {
		const struct gf_gpu_model *g = gf_catalog_at(i);
		const struct gf_gpu_model *o = gf_catalog_at((i + 1) % n);
		struct gf_ctl *ctl = ctl_new(GF_POLICY_FGD);
		join(ctl, "id", 8, g->id, NULL, NULL);
		join(ctl, "other", 8, o->id, NULL, NULL);
		struct gf_ctl_node_spec s = { .cpu_milli = 96000,
					      .memory_mib = 786432,
					      .ngpus = 8 };
		assert_int_equal(gf_fmt(s.labels, sizeof(s.labels),
					"nvidia.com/gpu.product=%s",
					g->gfd_product),
				 0);
		join(ctl, "lab", 8, g->id, NULL, &s);
		const char *alias = g->aliases[0];
		if (alias)
			join(ctl, "alias", 8, alias, NULL, NULL);
		static const char *const suffix[] = { "", "-SHARED" };
		for (int k = 0; k < 3; k++) {
			char sel[160];
			assert_int_equal(
				gf_fmt(sel, sizeof(sel),
				       "\"nvidia.com/gpu.product\": \"%s%s\"",
				       k < 2 ? g->gfd_product : g->id,
				       k < 2 ? suffix[k] : ""),
				0);
			struct gf_k8s_pod p;
			struct gf_k8s_ask a;
			struct gf_k8s_verdict v;
			pod_of(&p, "g", "\"nvidia.com/gpu\": \"1\"", sel, "");
			ask_of(ctl, &p, &a);
			verdict(ctl, &a, "id", &v);
			if (v.kind != GF_K8S_FITS)
				print_message("%s: %s\n", sel, v.why);
			assert_int_equal(v.kind, GF_K8S_FITS);
			verdict(ctl, &a, "lab", &v);
			assert_int_equal(v.kind, GF_K8S_FITS);
			if (alias) {
				verdict(ctl, &a, "alias", &v);
				assert_int_equal(v.kind, GF_K8S_FITS);
			}
			verdict(ctl, &a, "other", &v);
			assert_int_equal(v.kind, GF_K8S_NEVER);
		}
		gf_ctl_free(ctl);
	}
}

/* What gpufleet does not place: a clear message. */
static void test_ask_errors(void **state)
{
	(void)state;
	struct gf_ctl *ctl = ctl_new(GF_POLICY_FGD);
	static const char *const res[] = {
		"\"nvidia.com/gpu\": \"1\", \"gpufleet.io/gpu-milli\": \"250\"",
		"\"nvidia.com/mig-1g.10gb\": \"2\"",
		("\"nvidia.com/mig-1g.10gb\": \"1\", "
		 "\"nvidia.com/mig-2g.20gb\": \"1\""),
		"\"gpufleet.io/gpu-milli\": \"1500\"",
		"\"nvidia.com/gpu\": \"17\"",
	};
	static const char *const msg[] = {
		"gpufleet places one kind per pod",
		"gpufleet places one per pod",
		"gpufleet places one per pod",
		"expected 1 to 1000",
		"at most 16 on one node",
	};
	for (int k = 0; k < 5; k++) {
		struct gf_k8s_pod p;
		struct gf_k8s_ask a;
		struct gf_err e;
		pod_of(&p, "bad", res[k], "", "");
		assert_int_equal(gf_k8s_ask_of(ctl, &p, &a, &e), GF_EINVAL);
		if (!strstr(e.msg, msg[k]))
			print_message("%s\n", e.msg);
		assert_non_null(strstr(e.msg, msg[k]));
	}
	gf_ctl_free(ctl);
}

/* A pod's job: its fields, long names shortened, its uid read back. */
static void test_job_of_pod(void **state)
{
	(void)state;
	struct gf_ctl *ctl = ctl_new(GF_POLICY_FGD);
	int i = join(ctl, "n", 8, "h100-sxm", NULL, NULL);
	struct gf_k8s_pod p;
	struct gf_k8s_ask a;
	pod_of(&p, "a-pod-with-a-rather-long-name-that-goes-on-and-on-0123",
	       "\"nvidia.com/gpu\": \"2\", \"cpu\": \"4\", \"memory\": "
	       "\"2Gi\"",
	       "", "");
	snprintf(p.ns, sizeof(p.ns), "%s",
		 "a-namespace-of-fifty-five-characters-for-the-team-name");
	ask_of(ctl, &p, &a);
	struct gf_job *j = gf_k8s_job_new(ctl, &p, &a, i, 42, "pods", 1000);
	assert_string_equal(j->id, "j42");
	assert_true(strlen(j->spec.team) < GF_TEAM_NAME_MAX);
	assert_int_equal(strncmp(j->spec.team, "a-namespace-of", 14), 0);
	assert_true(strlen(j->spec.name) < GF_JOB_NAME_MAX);
	assert_int_equal(j->spec.gpus, 2);
	assert_int_equal(j->spec.cpu_milli, 4000);
	assert_int_equal(j->spec.memory_mib, 2048);
	struct gf_err e;
	assert_int_equal(gf_job_spec_check(&j->spec, &e), 0);
	char uid[64];
	assert_true(gf_k8s_job_uid(j, uid, sizeof(uid)));
	assert_string_equal(uid, p.uid);
	gf_job_release(j);
	gf_free(j);
	char cmd[] = "python train.py";
	struct gf_job other = { .spec.command = cmd };
	assert_false(gf_k8s_job_uid(&other, uid, sizeof(uid)));
	gf_ctl_free(ctl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decide_nvlink),
		cmocka_unit_test(test_decide_mig),
		cmocka_unit_test(test_decide_share_fgd),
		cmocka_unit_test(test_decide_memo_scores),
		cmocka_unit_test(test_decide_victims),
		cmocka_unit_test(test_decide_models),
		cmocka_unit_test(test_decide_gfd_products),
		cmocka_unit_test(test_ask_errors),
		cmocka_unit_test(test_job_of_pod),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
