/*
 * k8s.c - the scheduler extender's routes (k8s_impl.h says how a bind
 * flows): filter, prioritize and preempt answer from the core under its
 * lock and change nothing; bind is held and handed on.  Replies follow
 * the extender types to the letter (src/k8s/wire.c).
 *
 * Answers: a body that is not JSON or not the verb's type (no "Pod", a
 * name that is not a string) is a 400, as the server answers malformed
 * JSON; a pod gpufleet cannot place (two kinds of GPU ask, a bad
 * quantity) is an Error reply (HTTP 200, as kube-scheduler decodes it:
 * the message reaches its log and the pod's events); a pod with no GPU
 * ask passes through (every node kept, every score 0, its victims as
 * given, bind without a record); a name gpufleet does not know is
 * unresolvable in filter, scored 0, dropped from preempt's answer, and
 * an Error in bind.  Standby or stopped: 503.  No bearer token is asked
 * for: kube-scheduler sends none.  With a token file, the caller is
 * kube-scheduler by its client certificate, signed by --client-ca
 * (server/tls.h, decided by the route table: authz.c), else 401/403
 * (serve refuses --k8s-extender with tokens but
 * no --client-ca at start); without tokens (an open setup) anyone.
 */
#include <stdio.h>
#include <string.h>

#include "controller/k8s_impl.h"
#include "controller/service_impl.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

#define ANSWER_MAX (32u << 20)

/* The extender is on: else answered 404.  Who may call it, the route
 * table decided (authz.c: with tokens, a client certificate --client-ca
 * signed). */
static bool on(struct gf_service *s, struct gf_http_req *r)
{
	if (s->k8s)
		return true;
	gf_reply_error(r, 404, "not-found",
		       "the Kubernetes extender is off: start gpufleet serve "
		       "with --k8s-extender");
	return false;
}

/* Under ctl_lock: answered 503 unless this server leads. */
static bool leading(struct gf_service *s, struct gf_http_req *r)
{
	if (s->leading && !atomic_load(&s->failed))
		return true;
	gf_reply_error(r, 503,
		       atomic_load(&s->failed) ? "unavailable" : "standby",
		       "%s",
		       atomic_load(&s->failed)
			       ? "the server stopped: see its log"
			       : "this server is a standby: another one leads");
	return false;
}

static int send_json(struct gf_http_req *r, struct gf_buf *b,
		     const struct gf_json *j)
{
	int rc = gf_json_error(j) ? gf_reply_error(r, 500, "too-big",
						   "the answer is over %u MiB",
						   ANSWER_MAX >> 20)
				  : gf_reply_json(r, 200, b);
	gf_buf_release(b);
	return rc;
}

typedef void (*each_fn)(struct gf_service *s, struct gf_k8s_memo *m, int k,
			void *arg);

/* fn for k in [0, n) under ctl_lock with one memo of ask, then *count
 * bumped (when not NULL): true; false when this server does not lead (answered
 * 503). */
static bool each_locked(struct gf_service *s, struct gf_http_req *r,
			const struct gf_k8s_ask *ask, int n, each_fn fn,
			void *arg, uint64_t *count)
{
	struct gf_k8s_memo *m = gf_k8s_memo_new(s->ctl, ask, n);
	pthread_mutex_lock(&s->ctl_lock);
	bool lead = leading(s, r);
	for (int k = 0; lead && k < n; k++)
		fn(s, m, k, arg);
	if (lead && count)
		(*count)++;
	pthread_mutex_unlock(&s->ctl_lock);
	gf_k8s_memo_free(m);
	return lead;
}

/* The request's ExtenderArgs, pod and ask: 0; or answered (400, or
 * *error set for an Error reply: the pod cannot be placed by us). */
struct call {
	struct gf_jv *body;
	struct gf_k8s_args a;
	struct gf_k8s_pod pod;
	struct gf_k8s_ask ask;
	char error[GF_ERR_MSG_MAX + 16];
	struct gf_k8s_verdict *v; /* filter's, one a node (or NULL) */
	int64_t *score;		  /* prioritize's, one a node */
};

static void call_release(struct call *c)
{
	gf_free(c->v);
	gf_free(c->score);
	gf_k8s_args_release(&c->a);
	gf_jv_free(c->body);
}

static int call_read(struct gf_service *s, struct gf_http_req *r,
		     struct call *c)
{
	memset(c, 0, sizeof(*c));
	size_t len;
	const char *text = gf_req_body(r, &len);
	struct gf_err e;
	gf_err_clear(&e);
	int rc = len ? gf_k8s_args_parse(text, len, &c->body, &c->a, &e) : 0;
	if (!c->body) { /* answered 400 as for any body not JSON */
		gf_req_json(r, &c->body);
		return -1;
	}
	if (rc != 0) {
		gf_reply_error(r, e.code == GF_ETOOBIG ? 413 : 400, "invalid",
			       "%s", e.msg);
		return -1;
	}
	if (gf_k8s_pod_read(c->a.pod, &c->pod, &e) != 0) {
		gf_note(c->error, sizeof(c->error), "gpufleet: %s", e.msg);
		return 0;
	}
	pthread_mutex_lock(&s->ctl_lock);
	rc = gf_k8s_ask_of(s->ctl, &c->pod, &c->ask, &e);
	pthread_mutex_unlock(&s->ctl_lock);
	if (rc)
		gf_note(c->error, sizeof(c->error), "%s", e.msg);
	else
		gf__k8s_cache_put(s->k8s, &c->pod);
	return 0;
}

/* The extender on and leading, the request's call read: true; or
 * answered (c released). */
static bool call_open(struct gf_service *s, struct gf_http_req *r,
		      struct call *c)
{
	static const struct call none;
	*c = none;
	if (!on(s, r))
		return false;
	if (call_read(s, r, c) == 0)
		return true;
	call_release(c);
	return false;
}

/* The verdicts (into c->v, filter's) and the scores (into c->score,
 * prioritize's, and filter's when it keeps the best), each when not
 * NULL, for every candidate, under ctl_lock with one memo: the
 * names found through the last list's indices, the verdicts and scores
 * through what is kept for the pod's shape (k8s/answers.h: filter's work
 * is its prioritize's, and the next pod's of that shape but for the
 * nodes that changed and, for scores, a typical mix refreshed).  true;
 * false when this server does not lead (answered 503). */
static bool answer_locked(struct gf_service *s, struct gf_http_req *r,
			  struct call *c)
{
	struct gf_k8s_memo *m = gf_k8s_memo_new(s->ctl, &c->ask, c->a.n);
	int *idx = gf_malloc(((size_t)c->a.n + 1) * sizeof(*idx));
	struct gf_k8s_answers *ans = s->k8s->answers;
	pthread_mutex_lock(&s->ctl_lock);
	bool lead = leading(s, r);
	if (lead) {
		gf_k8s_answers_find_args(ans, s->ctl, &c->a, idx);
		struct gf_k8s_shape *sh =
			gf_k8s_answers_shape(ans, s->ctl, &c->ask);
		gf_k8s_answers_all(sh, s->ctl, idx, c->a.n, m, c->v, c->score);
		if (!c->score)
			s->k8s->filters++;
	}
	pthread_mutex_unlock(&s->ctl_lock);
	gf_free(idx);
	gf_k8s_memo_free(m);
	return lead;
}

int gf__k8s_filter(struct gf_http_req *r, void *arg)
{
	struct gf_service *s = ((struct gf_call *)arg)->s;
	struct call c;
	if (!call_open(s, r, &c))
		return 0; /* answered */
	if (!c.error[0] && c.ask.kind != GF_K8S_ASK_NONE) {
		/* every verdict is written: no need to zero them */
		c.v = gf_malloc(((size_t)c.a.n + 1) * sizeof(*c.v));
		long best = s->k8s->o.filter_best;
		if (best == 0)
			best = GF_K8S_FILTER_BEST;
		if (best > 0 && best < c.a.n) /* the scores pick them */
			c.score = gf_malloc(((size_t)c.a.n + 1) *
					    sizeof(*c.score));
		if (!answer_locked(s, r, &c)) {
			call_release(&c);
			return 0;
		}
		if (c.score)
			gf_k8s_keep_best(c.v, c.score, c.a.n, (int)best);
	}
	struct gf_buf b;
	struct gf_json j;
	gf_json_open(&j, &b, ANSWER_MAX);
	gf_k8s_filter_write(&j, &c.a, c.v, c.error);
	call_release(&c);
	return send_json(r, &b, &j);
}

int gf__k8s_prioritize(struct gf_http_req *r, void *arg)
{
	struct gf_service *s = ((struct gf_call *)arg)->s;
	struct call c;
	if (!call_open(s, r, &c))
		return 0; /* answered */
	if (c.error[0]) { /* a HostPriorityList has no Error: a 422 */
		call_release(&c);
		return gf_reply_error(r, 422, "invalid", "%s", c.error);
	}
	c.score = gf_calloc((size_t)c.a.n + 1, sizeof(*c.score));
	if (c.ask.kind != GF_K8S_ASK_NONE && !answer_locked(s, r, &c)) {
		call_release(&c);
		return 0;
	}
	struct gf_buf b;
	struct gf_json j;
	gf_json_open(&j, &b, ANSWER_MAX);
	gf_k8s_priorities_write(&j, &c.a, c.score);
	call_release(&c);
	return send_json(r, &b, &j);
}

static const char *job_of(void *arg, const char *uid)
{
	return gf__k8s_job_of(arg, uid);
}

/* Node k's victims trimmed: those gpufleet does not hold stay (they are
 * kube-scheduler's business: CPU, memory), of those it holds the fewest
 * that make room.  keep[k]: how many in pick[k], -1 to drop the node. */
struct trim {
	const struct gf_k8s_preempt_args *pa;
	int *keep;
	int **pick;
};

static void trim(struct gf_service *s, struct gf_k8s_memo *m, int k, void *arg)
{
	const struct gf_k8s_preempt_args *pa = ((struct trim *)arg)->pa;
	int *keep = ((struct trim *)arg)->keep;
	int *pick = ((struct trim *)arg)->pick[k];
	const struct gf_k8s_victims *x = &pa->v[k];
	int i = gf_ctl_node_find(s->ctl, x->node);
	struct gf_k8s_verdict v;
	gf_k8s_verdict(s->ctl, i, m, &v);
	keep[k] = -1;
	if (v.kind == GF_K8S_NEVER)
		return; /* no victim helps: not ready, unknown, no such GPU */
	int *got = gf_calloc((size_t)x->n + 1, sizeof(*got));
	int rc = gf_k8s_victims(s->ctl, i, m, x->uids, x->n, job_of, s->k8s,
				got);
	if (rc >= 0) {
		int n = 0;
		for (int u = 0; u < x->n; u++)
			if (!gf__k8s_job_of(s->k8s, x->uids[u]))
				pick[n++] = u;
		for (int u = 0; u < rc; u++)
			pick[n++] = got[u];
		keep[k] = n;
	}
	gf_free(got);
}

static void preempt_write(struct gf_service *s, struct gf_http_req *r,
			  struct gf_k8s_preempt_args *pa,
			  const struct gf_k8s_ask *ask)
{
	int *keep = gf_calloc((size_t)pa->n + 1, sizeof(*keep));
	int **pick = gf_calloc((size_t)pa->n + 1, sizeof(*pick));
	for (int k = 0; k < pa->n; k++) {
		pick[k] = gf_calloc((size_t)pa->v[k].n + 1, sizeof(int));
		keep[k] = pa->v[k].n;
		for (int u = 0; u < pa->v[k].n; u++)
			pick[k][u] = u;
	}
	struct trim t = { pa, keep, pick };
	if (ask->kind == GF_K8S_ASK_NONE ||
	    each_locked(s, r, ask, pa->n, trim, &t, &s->k8s->preempts)) {
		struct gf_buf b;
		struct gf_json j;
		gf_json_open(&j, &b, ANSWER_MAX);
		gf_k8s_preempt_write(&j, pa, keep, pick);
		send_json(r, &b, &j);
	}
	for (int k = 0; k < pa->n; k++)
		gf_free(pick[k]);
	gf_free(pick);
	gf_free(keep);
}

/* The pod's ask for preempt: 0, or answered 422 (no Error field in an
 * ExtenderPreemptionResult). */
static int preempt_ask(struct gf_service *s, struct gf_http_req *r,
		       const struct gf_k8s_preempt_args *pa,
		       struct gf_k8s_ask *ask)
{
	struct gf_err e;
	gf_err_clear(&e);
	struct gf_k8s_pod pod;
	int rc = gf_k8s_pod_read(pa->pod, &pod, &e);
	if (rc == 0) {
		pthread_mutex_lock(&s->ctl_lock);
		rc = gf_k8s_ask_of(s->ctl, &pod, ask, &e);
		pthread_mutex_unlock(&s->ctl_lock);
	}
	if (rc)
		gf_reply_error(r, 422, "invalid", "%s", e.msg);
	return rc;
}

/* The extender on and the request's body JSON (e cleared for reading
 * it): the service; or NULL, answered. */
static struct gf_service *body_open(struct gf_http_req *r, void *arg,
				    struct gf_jv **body, struct gf_err *e)
{
	struct gf_service *s = ((struct gf_call *)arg)->s;
	gf_err_clear(e);
	return on(s, r) && gf_req_json(r, body) == 0 ? s : NULL;
}

int gf__k8s_preempt(struct gf_http_req *r, void *arg)
{
	struct gf_jv *body;
	struct gf_err e;
	struct gf_service *s = body_open(r, arg, &body, &e);
	if (!s)
		return 0;
	struct gf_k8s_preempt_args pa;
	struct gf_k8s_ask ask;
	int rc = gf_k8s_preempt_args_read(body, &pa, &e);
	if (rc)
		gf_reply_error(r, rc == GF_ETOOBIG ? 413 : 400, "invalid", "%s",
			       e.msg);
	else if (preempt_ask(s, r, &pa, &ask) == 0)
		preempt_write(s, r, &pa, &ask);
	gf_k8s_preempt_args_release(&pa);
	gf_jv_free(body);
	return 0;
}

int gf__k8s_bind(struct gf_http_req *r, void *arg)
{
	struct gf_jv *body;
	struct gf_err e;
	struct gf_service *s = body_open(r, arg, &body, &e);
	if (!s)
		return 0;
	struct gf_k8s_op *x = gf__k8s_op_new();
	struct gf_op *op = &x->op;
	int rc = gf_k8s_bind_args_read(body, &x->b, &e);
	gf_jv_free(body);
	if (rc) {
		gf__op_free(op);
		return gf_reply_error(r, 400, "invalid", "%s", e.msg);
	}
	if (gf__k8s_cache_get(s->k8s, x->b.uid, &x->pod) &&
	    !strcmp(x->pod.name, x->b.pod) && !strcmp(x->pod.ns, x->b.ns)) {
		x->stage = GF_K8S_RECORD;
		return gf__service_hold(s, r, op);
	}
	/* not seen by filter (a restart, another replica): read it first */
	x->stage = GF_K8S_FETCH;
	op->req = r;
	if (gf_req_suspend(r) != 0) {
		gf__op_free(op);
		return gf_reply_error(r, 500, "internal",
				      "cannot hold the request");
	}
	gf__k8s_push(s->k8s, op);
	return 0;
}
