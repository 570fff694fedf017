/*
 * k8s_pods.c - what the scheduler extender keeps by pod uid: the pods
 * whose jobs the core holds (uid -> job seq, changed by the scheduler
 * thread, read by handlers, both under ctl_lock), and the filter's pod
 * cache (the last GF_K8S_POD_CACHE pods filter read, for their binds;
 * its own lock).  Both are rows in arrays indexed by util/hash's gf_hmap.
 */
#include <inttypes.h>
#include <string.h>

#include "controller/k8s_impl.h"
#include "util/fmt.h"
#include "util/mem.h"

/* ---- the pods the core holds ---------------------------------------- */

struct pod_key {
	const struct gf_k8s *k;
	const char *uid;
};

static bool pod_eq(const void *key, uint32_t row)
{
	const struct pod_key *x = key;
	return !strcmp(x->k->pods[row].uid, x->uid);
}

static int64_t pod_row(const struct gf_k8s *k, const char *uid)
{
	struct pod_key key = { k, uid };
	return uid[0] ? gf_hmap_get(&k->pidx, gf_hash_str(uid), pod_eq, &key)
		      : -1;
}

const char *gf__k8s_job_of(struct gf_k8s *k, const char *uid)
{
	int64_t r = pod_row(k, uid);
	if (r < 0)
		return NULL;
	const struct gf_job *j = gf__job_by_seq(k->s->ctl, k->pods[r].seq);
	return j && j->state == GF_JOB_RUNNING ? j->id : NULL;
}

bool gf__k8s_held(struct gf_k8s *k, const char *uid)
{
	return pod_row(k, uid) >= 0;
}

void gf__k8s_pods_put(struct gf_k8s *k, const char *uid, uint64_t seq)
{
	int64_t r = pod_row(k, uid);
	if (r >= 0) {
		k->pods[r].seq = seq;
		return;
	}
	struct k8s_pod_ref p = { .seq = seq };
	/* a uid is shorter than its field (gf_k8s_pod_read checks); the
	 * core keeps no pod it could not find again */
	if (!uid[0] || gf_fmt(p.uid, sizeof(p.uid), "%s", uid) != 0)
		return;
	if (k->pn == k->pcap) {
		k->pcap = k->pcap ? 2 * k->pcap : 1024;
		k->pods = gf_reallocarray(k->pods, (size_t)k->pcap,
					  sizeof(*k->pods));
	}
	if (gf_hmap_put(&k->pidx, gf_hash_str(uid), (uint32_t)k->pn) != 0)
		return; /* past GF_HMAP_MAX pods: not kept */
	k->pods[k->pn++] = p;
}

void gf__k8s_pods_del(struct gf_k8s *k, const char *uid)
{
	int64_t r = pod_row(k, uid);
	if (r < 0)
		return;
	struct pod_key key = { k, uid };
	(void)gf_hmap_del(&k->pidx, gf_hash_str(uid), pod_eq, &key);
	int last = --k->pn;
	if (r != last) { /* the last row fills the hole */
		gf_hmap_move(&k->pidx, gf_hash_str(k->pods[last].uid),
			     (uint32_t)last, (uint32_t)r);
		k->pods[r] = k->pods[last];
	}
}

void gf__k8s_pods_each(struct gf_k8s *k,
		       void (*fn)(const char *uid, uint64_t seq, void *arg),
		       void *arg)
{
	/* from the end: a row deleted is filled by one already seen */
	for (int i = k->pn - 1; i >= 0; i--) {
		if (i >= k->pn)
			continue;
		struct k8s_pod_ref p = k->pods[i];
		fn(p.uid, p.seq, arg);
	}
}

void gf__k8s_index(struct gf_k8s *k)
{
	const struct gf_ctl *ctl = k->s->ctl;
	gf_hmap_clear(&k->pidx);
	k->pn = 0;
	char uid[GF_K8S_UID_MAX];
	for (int i = 0, n = gf_ctl_njobs(ctl); i < n; i++) {
		const struct gf_job *j = gf_ctl_job_at(ctl, i);
		if (j->state == GF_JOB_RUNNING &&
		    gf_k8s_job_uid(j, uid, sizeof(uid)))
			gf__k8s_pods_put(k, uid, j->seq);
	}
}

void gf__k8s_pods_free(struct gf_k8s *k)
{
	gf_hmap_release(&k->pidx);
	gf_free(k->pods);
	k->pods = NULL;
	k->pn = k->pcap = 0;
}

/* ---- the filter's pod cache ----------------------------------------- */

void gf__k8s_cache_init(struct gf_k8s *k)
{
	pthread_mutex_init(&k->cache_lock, NULL);
	k->cache = gf_calloc(GF_K8S_POD_CACHE, sizeof(*k->cache));
	k->chain = gf_calloc(GF_K8S_CACHE_CHAINS, sizeof(*k->chain));
	for (int i = 0; i < GF_K8S_CACHE_CHAINS; i++)
		k->chain[i] = -1;
	for (int i = 0; i < GF_K8S_POD_CACHE; i++)
		k->cache[i].next = -1;
	k->cnext = 0;
}

void gf__k8s_cache_release(struct gf_k8s *k)
{
	gf_free(k->cache);
	gf_free(k->chain);
	pthread_mutex_destroy(&k->cache_lock);
}

/* The chain of uid (under cache_lock). */
static int *chain_of(struct gf_k8s *k, const char *uid)
{
	return &k->chain[gf_hash_str(uid) % GF_K8S_CACHE_CHAINS];
}

/* The slot holding uid, or -1 (under cache_lock). */
static int cache_find(struct gf_k8s *k, const char *uid)
{
	int i = *chain_of(k, uid);
	while (i >= 0 && strcmp(k->cache[i].uid, uid))
		i = k->cache[i].next;
	return i;
}

void gf__k8s_cache_put(struct gf_k8s *k, const struct gf_k8s_pod *p)
{
	if (!p->uid[0])
		return;
	pthread_mutex_lock(&k->cache_lock);
	int hit = cache_find(k, p->uid);
	if (hit < 0) { /* the oldest slot goes: out of its chain, then */
		hit = k->cnext;
		k->cnext = (k->cnext + 1) % GF_K8S_POD_CACHE;
		struct k8s_cached *old = &k->cache[hit];
		if (old->uid[0]) {
			int *at = chain_of(k, old->uid);
			while (*at != hit)
				at = &k->cache[*at].next;
			*at = old->next;
		}
		memcpy(old->uid, p->uid, sizeof(old->uid)); /* same size */
		int *head = chain_of(k, old->uid);
		old->next = *head;
		*head = hit;
	}
	k->cache[hit].pod = *p;
	pthread_mutex_unlock(&k->cache_lock);
}

bool gf__k8s_cache_get(struct gf_k8s *k, const char *uid,
		       struct gf_k8s_pod *out)
{
	bool got = false;
	pthread_mutex_lock(&k->cache_lock);
	int i = uid[0] ? cache_find(k, uid) : -1;
	if (i >= 0) {
		*out = k->cache[i].pod;
		got = true;
	}
	pthread_mutex_unlock(&k->cache_lock);
	return got;
}

void gf__k8s_reply_bind(struct gf_http_req *r, const char *error)
{
	struct gf_buf b;
	struct gf_json j;
	gf_json_open(&j, &b, 64u << 10);
	gf_k8s_bind_result_write(&j, error);
	(void)gf_reply_json(r, 200, &b); /* a failed send: nothing to do */
	gf_buf_release(&b);
}
