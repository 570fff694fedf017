/*
 * test_k8s_decide.c - the extender's decisions (src/k8s/decide.c) and
 * the core's calls they make (gf_ctl_add_on, gf_ctl_victims, ...), on
 * small clusters whose answers are derived by hand in the comments (the
 * DGX-1V's NVLink quads, MIG instances, a share where FGD puts it, the
 * fewest victims), and the verdicts kept between calls (k8s/answers.h).
 * test_k8s.c has the pods and the wire.
 */
#include <gpufleet/catalog.h>
#include <gpufleet/ctl.h>
#include <gpufleet/job.h>

#include "ctl_helpers.h"
#include "k8s/answers.h"
#include "k8s/decide.h"
#include "k8s/k8s.h"
#include "k8s_helpers.h"
#include "util/buf.h"
#include "util/fmt.h"
#include "util/json.h"
#include "util/mem.h"

static uint64_t next_seq;

/* ---- fixtures -------------------------------------------------------- */

static struct gf_ctl *ctl_new(enum gf_policy p)
{
	struct gf_ctl_config *cfg = gf_calloc(1, sizeof(*cfg));
	cfg->policy = p;
	cfg->nclasses = 2;
	snprintf(cfg->classes[0].name, GF_CLASS_NAME_MAX, "batch");
	cfg->classes[0].preemptible = true;
	cfg->classes[0].priority = 10;
	snprintf(cfg->classes[1].name, GF_CLASS_NAME_MAX, "pods");
	cfg->classes[1].priority = 200;
	cfg->nblocks = 1;
	snprintf(cfg->blocks[0], GF_NODE_NAME_MAX, "b0");
	cfg->open_teams = true;
	cfg->seed = 1;
	struct gf_cluster *c = gf_calloc(1, sizeof(*c));
	gf_cluster_init(c);
	struct gf_ctl *ctl;
	struct gf_err e;
	assert_int_equal(gf_ctl_new(cfg, c, NULL, &ctl, &e), 0);
	gf_free(cfg);
	next_seq = 0;
	return ctl;
}

/* A node joins, ready: n GPUs of model, a topology or NULL, MIG. */
static int join(struct gf_ctl *ctl, const char *name, int ngpus,
		const char *model, const struct gf_gpu_topo *t,
		const struct gf_ctl_node_spec *mig)
{
	struct gf_ctl_node_spec s = { .cpu_milli = 96000,
				      .memory_mib = 786432,
				      .ngpus = ngpus };
	if (mig)
		s = *mig;
	snprintf(s.gpu_model, sizeof(s.gpu_model), "%s", model ? model : "");
	s.topo = t;
	struct gf_err e;
	int i = gf_ctl_node_add(ctl, name, &s, 100, NULL, &e);
	if (i < 0)
		print_message("node %s: %s\n", name, e.msg);
	assert_true(i >= 0);
	assert_int_equal(gf_ctl_node_ready(ctl, i, true, NULL, 100, NULL, &e),
			 0);
	check(ctl);
	return i;
}

/* A job running on node with these GPUs (whole: milli 1000; a share;
 * or a MIG instance at mig_start of its profile on gpus[0]). */
static const char *run(struct gf_ctl *ctl, const char *node, const int *gpus,
		       int n, int milli, const char *profile, int mig_start,
		       const char *command)
{
	struct gf_job *j = gf_calloc(1, sizeof(*j));
	j->seq = ++next_seq;
	snprintf(j->id, sizeof(j->id), "j%llu", (unsigned long long)j->seq);
	snprintf(j->spec.team, sizeof(j->spec.team), "default");
	snprintf(j->spec.class_name, sizeof(j->spec.class_name), "pods");
	j->spec.replicas = 1;
	if (profile)
		snprintf(j->spec.mig_profile, sizeof(j->spec.mig_profile), "%s",
			 profile);
	else if (milli < 1000)
		j->spec.gpu_milli = milli;
	else
		j->spec.gpus = n;
	j->spec.command = command ? gf_strdup(command) : NULL;
	j->state = GF_JOB_RUNNING;
	j->submitted_ms = j->started_ms = 50;
	j->attempts = 1;
	j->block = 0;
	j->place = gf_calloc(1, sizeof(*j->place));
	struct gf_job_place *p = j->place;
	snprintf(p->node_name, sizeof(p->node_name), "%s", node);
	p->node = -1;
	p->ngpus = n;
	memcpy(p->gpus, gpus, (size_t)n * sizeof(int));
	p->gpu_milli = profile ? 0 : milli;
	p->mig_start = profile ? mig_start : -1;
	struct gf_err e;
	int rc = gf_ctl_add(ctl, j, &e);
	if (rc)
		print_message("run: %s\n", e.msg);
	assert_int_equal(rc, 0);
	const struct gf_job *got = gf_ctl_job(ctl, j->id);
	assert_int_equal(got->state, GF_JOB_RUNNING);
	check(ctl);
	return got->id;
}

static void ask_of(const struct gf_ctl *ctl, const struct gf_k8s_pod *p,
		   struct gf_k8s_ask *a)
{
	struct gf_err e;
	int rc = gf_k8s_ask_of(ctl, p, a, &e);
	if (rc)
		print_message("ask: %s\n", e.msg);
	assert_int_equal(rc, 0);
}

static void verdict(const struct gf_ctl *ctl, const struct gf_k8s_ask *a,
		    const char *node, struct gf_k8s_verdict *v)
{
	struct gf_k8s_memo *m = gf_k8s_memo_new(ctl, a, 4);
	gf_k8s_verdict(ctl, gf_ctl_node_find(ctl, node), m, v);
	gf_k8s_memo_free(m);
}

static int score(const struct gf_ctl *ctl, const struct gf_k8s_ask *a,
		 const char *node)
{
	struct gf_k8s_memo *m = gf_k8s_memo_new(ctl, a, 4);
	int s = gf_k8s_score(ctl, gf_ctl_node_find(ctl, node), m);
	gf_k8s_memo_free(m);
	return s;
}

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

/* ---- verdicts kept between calls (k8s/answers.h) ---------------------- */

/* Node i's verdict through the shape equals gf_k8s_verdict's (kind and
 * reason), and so does its score through the shape (asked twice: kept
 * the second time) equal gf_k8s_score's, computed afresh; its kind. */
static enum gf_k8s_kind kept_same(const struct gf_ctl *ctl,
				  struct gf_k8s_shape *sh,
				  const struct gf_k8s_ask *a, int i)
{
	struct gf_k8s_memo *m1 = gf_k8s_memo_new(ctl, a, 8);
	struct gf_k8s_memo *m2 = gf_k8s_memo_new(ctl, a, 8);
	struct gf_k8s_verdict kept, own;
	gf_k8s_answers_verdict(sh, ctl, i, m1, &kept);
	gf_k8s_verdict(ctl, i, m2, &own);
	assert_int_equal(kept.kind, own.kind);
	assert_string_equal(kept.why, own.why);
	int fresh = gf_k8s_score(ctl, i, m2);
	for (int twice = 0; twice < 2; twice++)
		assert_int_equal(gf_k8s_answers_score(sh, ctl, i, m1, &kept),
				 fresh);
	gf_k8s_memo_free(m1);
	gf_k8s_memo_free(m2);
	return kept.kind;
}

/* kube-scheduler's list through gf_k8s_answers_all (verdicts and
 * scores, as filter and prioritize ask) equal to each node's computed
 * afresh. */
static void all_same(const struct gf_ctl *ctl, struct gf_k8s_shape *sh,
		     const struct gf_k8s_ask *a, const int *idx, int n)
{
	struct gf_k8s_memo *m1 = gf_k8s_memo_new(ctl, a, n);
	struct gf_k8s_verdict *v = gf_calloc((size_t)n, sizeof(*v));
	int64_t *sc = gf_calloc((size_t)n, sizeof(*sc));
	gf_k8s_answers_all(sh, ctl, idx, n, m1, v, NULL);  /* filter */
	gf_k8s_answers_all(sh, ctl, idx, n, m1, NULL, sc); /* prioritize */
	for (int k = 0; k < n; k++) {
		struct gf_k8s_memo *m2 = gf_k8s_memo_new(ctl, a, 8);
		struct gf_k8s_verdict own;
		gf_k8s_verdict(ctl, idx[k], m2, &own);
		assert_int_equal(v[k].kind, own.kind);
		assert_string_equal(v[k].why, own.why);
		assert_int_equal(sc[k], gf_k8s_score(ctl, idx[k], m2));
		gf_k8s_memo_free(m2);
	}
	gf_free(v);
	gf_free(sc);
	gf_k8s_memo_free(m1);
}

/* Two pods of one shape (8 GPUs): what the first found kept for the
 * second, and dropped for each node that changed between them (a pod
 * bound there, cordoned, a GPU unhealthy, not ready), found again when
 * it is free again. */
static void test_answers_invalidated(void **state)
{
	(void)state;
	struct gf_ctl *ctl = ctl_new(GF_POLICY_FGD);
	static const char *const nodes[] = { "a0", "a1", "a2", "a3" };
	for (int k = 0; k < 4; k++)
		join(ctl, nodes[k], 8, "a100-80gb", NULL, NULL);
	struct gf_k8s_pod p, q;
	struct gf_k8s_ask a, one;
	pod_of(&p, "big-0", "\"nvidia.com/gpu\": \"8\"", "", "");
	ask_of(ctl, &p, &a);
	pod_of(&q, "small-0", "\"nvidia.com/gpu\": \"1\"", "", "");
	ask_of(ctl, &q, &one);
	struct gf_k8s_answers *c = gf_k8s_answers_new();
	uint64_t hits, misses;
	struct gf_k8s_shape *sh = gf_k8s_answers_shape(c, ctl, &a);
	assert_non_null(sh);
	for (int i = 0; i < 4; i++) /* pod 1: found */
		assert_int_equal(kept_same(ctl, sh, &a, i), GF_K8S_FITS);
	gf_k8s_answers_counts(c, &hits, &misses);
	assert_int_equal(hits, 0);
	assert_int_equal(misses, 4);
	/* between the pods: a one-GPU pod bound on a0, a1 cordoned, a GPU
	 * of a2 unhealthy, a3 not ready */
	int i0 = gf_ctl_node_find(ctl, "a0");
	struct gf_job *j =
		gf_k8s_job_new(ctl, &q, &one, i0, ++next_seq, "pods", 1000);
	struct gf_err e;
	assert_int_equal(gf_ctl_add_on(ctl, j, i0, 1000, &e), 0);
	const char *id = gf_ctl_job(ctl, j->id)->id;
	assert_int_equal(gf_ctl_node_cordon(ctl, 1, true, &e), 0);
	assert_int_equal(gf_ctl_gpu_health(ctl, 2, 5, false, "xid 79", &e), 0);
	assert_int_equal(
		gf_ctl_node_ready(ctl, 3, false, "silent", 1100, NULL, &e), 0);
	check(ctl);
	/* pod 2, the same shape: nothing kept is given */
	assert_ptr_equal(gf_k8s_answers_shape(c, ctl, &a), sh);
	assert_int_equal(kept_same(ctl, sh, &a, 0), GF_K8S_NO_ROOM);
	assert_int_not_equal(kept_same(ctl, sh, &a, 1), GF_K8S_FITS);
	assert_int_not_equal(kept_same(ctl, sh, &a, 2), GF_K8S_FITS);
	assert_int_equal(kept_same(ctl, sh, &a, 3), GF_K8S_NEVER);
	gf_k8s_answers_counts(c, &hits, &misses);
	assert_int_equal(hits, 0);
	/* a0's pod gone, a1 uncordoned: they fit again, and are kept */
	assert_int_equal(gf_ctl_cancel(ctl, id, 2000, &e), 0);
	assert_int_equal(gf_ctl_node_cordon(ctl, 1, false, &e), 0);
	check(ctl);
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < 2; i++)
			assert_int_equal(kept_same(ctl, sh, &a, i),
					 GF_K8S_FITS);
	gf_k8s_answers_counts(c, &hits, &misses);
	assert_int_equal(hits, 2);
	/* asks the answers do not keep */
	pod_of(&p, "mig-0", "\"nvidia.com/mig-1g.10gb\": \"1\"", "", "");
	ask_of(ctl, &p, &one);
	assert_null(gf_k8s_answers_shape(c, ctl, &one));
	gf_k8s_answers_free(c);
	gf_ctl_free(ctl);
}

/* More changes between two calls of one shape than the cluster's change
 * log keeps: a node filled first (its change out of the log by the
 * second call), then 600 pods bound and ended on another; the second
 * call checks every stamp against its node and gives the filled one's
 * verdict anew. */
static void test_answers_log_overflow(void **state)
{
	(void)state;
	struct gf_ctl *ctl = ctl_new(GF_POLICY_FGD);
	static const char *const nodes[] = { "o0", "o1", "o2" };
	for (int k = 0; k < 3; k++)
		join(ctl, nodes[k], 8, "a100-80gb", NULL, NULL);
	struct gf_k8s_pod p, big;
	struct gf_k8s_ask one, eight;
	pod_of(&p, "one-0", "\"nvidia.com/gpu\": \"1\"", "", "");
	ask_of(ctl, &p, &one);
	pod_of(&big, "big-0", "\"nvidia.com/gpu\": \"8\"", "", "");
	ask_of(ctl, &big, &eight);
	struct gf_k8s_answers *c = gf_k8s_answers_new();
	int idx[3] = { 0, 1, 2 };
	struct gf_k8s_shape *sh = gf_k8s_answers_shape(c, ctl, &one);
	all_same(ctl, sh, &one, idx, 3); /* all three fit, kept */
	struct gf_err e;
	struct gf_job *j =
		gf_k8s_job_new(ctl, &big, &eight, 1, ++next_seq, "pods", 1000);
	assert_int_equal(gf_ctl_add_on(ctl, j, 1, 1000, &e), 0);
	uint64_t before = gf_ctl_cluster(ctl)->nchanged;
	for (int k = 0; k < 600; k++) {
		j = gf_k8s_job_new(ctl, &p, &one, 0, ++next_seq, "pods",
				   1001 + k);
		assert_int_equal(gf_ctl_add_on(ctl, j, 0, 1001 + k, &e), 0);
		const char *id = gf_ctl_job(ctl, j->id)->id;
		assert_int_equal(gf_ctl_cancel(ctl, id, 1001 + k, &e), 0);
	}
	check(ctl);
	assert_true(gf_ctl_cluster(ctl)->nchanged - before > GF_CLUSTER_LOG);
	sh = gf_k8s_answers_shape(c, ctl, &one);
	all_same(ctl, sh, &one, idx, 3);
	struct gf_k8s_memo *m = gf_k8s_memo_new(ctl, &one, 3);
	struct gf_k8s_verdict v[3];
	gf_k8s_answers_all(sh, ctl, idx, 3, m, v, NULL);
	assert_int_equal(v[1].kind, GF_K8S_NO_ROOM);
	gf_k8s_memo_free(m);
	gf_k8s_answers_free(c);
	gf_ctl_free(ctl);
}

/* The list names[0..n) read as kube-scheduler sends it (in place:
 * gf_k8s_args_parse) and found through the kept lists: the indices idx
 * (gf_ctl_node_find's). */
static void lists_same(struct gf_k8s_answers *c, const struct gf_ctl *ctl,
		       const char *const *names, int n, const int *idx)
{
	struct gf_buf b;
	gf_buf_init(&b, 1u << 16);
	gf_buf_puts(&b, "{\"Pod\": {}, \"NodeNames\": [");
	for (int k = 0; k < n; k++)
		gf_buf_printf(&b, "%s\"%s\"", k ? "," : "", names[k]);
	gf_buf_puts(&b, "]}");
	struct gf_jv *v = NULL;
	struct gf_k8s_args a;
	struct gf_err e;
	assert_int_equal(gf_k8s_args_parse(gf_buf_str(&b), b.len, &v, &a, &e),
			 0);
	assert_non_null(a.own);
	int *got = gf_calloc((size_t)n, sizeof(*got));
	gf_k8s_answers_find_args(c, ctl, &a, got);
	for (int k = 0; k < n; k++)
		assert_int_equal(got[k], idx[k]);
	gf_free(got);
	gf_k8s_args_release(&a);
	gf_jv_free(v);
	gf_buf_release(&b);
}

/* A random sequence of binds, ends, cordons, unhealthy GPUs and nodes
 * going silent over 12 nodes, six pod shapes asked in turn: every
 * verdict and score through the kept answers equal to those computed
 * without them, and every name found through the kept indices equal to
 * gf_ctl_node_find's (names sent in changing orders, some unknown; one
 * of those joins half-way), as text too (kept lists: the same list
 * again gives its kept indices, but not once a node joined).
 * Between a shape's filter and its prioritize, and between steps, the
 * core schedules now and then: the typical mix it refreshes from the
 * binds moves the scores of nodes that did not change (kept scores
 * dropped: gf_ctl_score_gen). */
static void test_answers_differential(void **state)
{
	(void)state;
	struct gf_ctl *ctl = ctl_new(GF_POLICY_FGD);
	enum { N = 12 };
	char names[N + 2][16];
	for (int k = 0; k < N; k++) {
		snprintf(names[k], sizeof(names[k]), "r%02d", k);
		join(ctl, names[k], 8, "a100-80gb", NULL, NULL);
	}
	snprintf(names[N], sizeof(names[N]), "nowhere");
	snprintf(names[N + 1], sizeof(names[N + 1]), "r00x");
	static const char *const res[] = {
		"\"nvidia.com/gpu\": \"1\"",
		"\"nvidia.com/gpu\": \"2\"",
		"\"nvidia.com/gpu\": \"4\"",
		"\"nvidia.com/gpu\": \"8\"",
		"\"gpufleet.io/gpu-milli\": \"250\"",
		"\"gpufleet.io/gpu-milli\": \"800\"",
	};
	struct gf_k8s_pod p[6];
	struct gf_k8s_ask a[6];
	for (int r = 0; r < 6; r++) {
		pod_of(&p[r], "diff-0", res[r], "", "");
		ask_of(ctl, &p[r], &a[r]);
	}
	struct gf_k8s_answers *c = gf_k8s_answers_new();
	char ids[64][GF_JOB_ID_MAX];
	int nids = 0, fits = 0, refreshes = 0;
	uint64_t rnd = 42;
	struct gf_err e;
	for (int step = 0; step < 400; step++) {
		rnd = rnd * 6364136223846793005ULL + 1442695040888963407ULL;
		int what = (int)((rnd >> 33) % 10), i = (int)((rnd >> 45) % N);
		int r = (int)((rnd >> 20) % 6);
		if (what < 5 && nids < 64) { /* a pod bound where it fits */
			struct gf_job *j =
				gf_k8s_job_new(ctl, &p[r], &a[r], i, ++next_seq,
					       "pods", 1000 + step);
			if (gf_ctl_add_on(ctl, j, i, 1000 + step, &e) == 0) {
				snprintf(ids[nids++], GF_JOB_ID_MAX, "%s",
					 gf_ctl_job(ctl, j->id)->id);
			} else {
				gf_job_release(j);
				gf_free(j);
			}
		} else if (what < 7 && nids > 0) { /* a pod ends */
			int k = (int)((rnd >> 40) % (uint64_t)nids);
			assert_int_equal(
				gf_ctl_cancel(ctl, ids[k], 1000 + step, &e), 0);
			memcpy(ids[k], ids[--nids], GF_JOB_ID_MAX);
		} else if (what == 7) {
			assert_int_equal(
				gf_ctl_node_cordon(
					ctl, i,
					!gf_ctl_node_is_cordoned(ctl, i), &e),
				0);
		} else if (what == 8) {
			int g = (int)((rnd >> 50) % 8);
			bool sick = (rnd >> 60) & 1;
			assert_int_equal(gf_ctl_gpu_health(ctl, i, g, !sick,
							   sick ? "xid" : NULL,
							   &e),
					 0);
		} else {
			bool up = !gf_ctl_node_is_ready(ctl, i);
			assert_int_equal(gf_ctl_node_ready(ctl, i, up,
							   up ? NULL : "silent",
							   1000 + step, NULL,
							   &e),
					 0);
		}
		check(ctl);
		/* kube-scheduler's list, rotated by the step, two names
		 * unknown to the core at the end */
		const char *list[N + 2];
		int idx[N + 2];
		for (int k = 0; k < N + 2; k++)
			list[k] = k < N ? names[(k + step / 7) % N] : names[k];
		if (step == 200) /* a name unknown till now joins */
			join(ctl, "nowhere", 8, "a100-80gb", NULL, NULL);
		gf_k8s_answers_find(c, ctl, list, N + 2, idx);
		lists_same(c, ctl, list, N + 2, idx);
		struct gf_k8s_shape *sh = gf_k8s_answers_shape(c, ctl, &a[r]);
		for (int k = 0; k < N + 2; k++) {
			assert_int_equal(idx[k],
					 gf_ctl_node_find(ctl, list[k]));
			fits += kept_same(ctl, sh, &a[r], idx[k]) ==
				GF_K8S_FITS;
		}
		uint64_t gen = gf_ctl_score_gen(ctl);
		if (step % 3 == 0) /* the mix refreshed, maybe */
			assert_int_equal(
				gf_ctl_schedule(ctl, 1000 + step, NULL), 0);
		refreshes += gf_ctl_score_gen(ctl) != gen;
		sh = gf_k8s_answers_shape(c, ctl, &a[r]);
		all_same(ctl, sh, &a[r], idx, N + 2);
	}
	uint64_t hits, misses;
	gf_k8s_answers_counts(c, &hits, &misses);
	print_message("  %d fits; %llu verdicts kept, %llu computed; "
		      "%d mix refreshes\n",
		      fits, (unsigned long long)hits,
		      (unsigned long long)misses, refreshes);
	assert_true(hits > 0 && fits > 0); /* both paths were taken */
	assert_true(refreshes > 0);
	gf_k8s_answers_free(c);
	gf_ctl_free(ctl);
}

/*
 * Victims for a 4-GPU pod on a DGX-1V with GPUs 0 and 1 free and a
 * one-GPU pod on each of 2-7.  The quads are 0-3 and 4-7 (no other four
 * are all NVLink): freeing 2 and 3 completes 0-3, two victims, the
 * fewest.  Without 2 among the candidates, only 4-7 remains: four.  A
 * candidate gpufleet does not hold frees nothing here.
 */
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
		cmocka_unit_test(test_answers_invalidated),
		cmocka_unit_test(test_answers_differential),
		cmocka_unit_test(test_answers_log_overflow),
		cmocka_unit_test(test_decide_victims),
		cmocka_unit_test(test_decide_models),
		cmocka_unit_test(test_decide_gfd_products),
		cmocka_unit_test(test_ask_errors),
		cmocka_unit_test(test_job_of_pod),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
