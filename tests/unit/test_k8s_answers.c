/*
 * test_k8s_answers.c - the extender's verdicts and scores kept between
 * calls (src/k8s/answers.c, what k8s/answers.h says is kept and what
 * drops it): a kept answer dropped for each node that changed between
 * two pods of one shape, more changes than the cluster's log keeps, and
 * every verdict, score and name index equal with and without what is
 * kept over random changes and typical-mix refreshes.
 */
#include "k8s_decide_helpers.h"

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
int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_answers_invalidated),
		cmocka_unit_test(test_answers_differential),
		cmocka_unit_test(test_answers_log_overflow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
