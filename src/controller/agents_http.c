/*
 * agents_http.c - the node agents' routes: the body read strictly (a 400
 * names the field), and the request held and queued for the scheduler
 * thread (agents.c), which answers once what it changed is committed,
 * or, for a long poll, once the node's assignments change or the wait
 * ends.  Who may call them (an admin, or the node's own token: an agent
 * never sees or changes another node) is authz.c's table, decided at
 * dispatch before these run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/agents_impl.h"
#include "controller/service_impl.h"
#include "util/fmt.h"
#include "util/hash.h"
#include "util/mem.h"

static void agent_release(struct gf_op *op)
{
	struct agent_op *x = agent_op(op);
	gf_np_inventory_free(x->inv);
	gf_free(x->body);
	if (x->hb)
		gf_np_heartbeat_release(x->hb);
	gf_free(x->hb);
	gf_free(x->acked);
	gf_free(x);
}

/* The agents' request kind (register, heartbeat or poll: the op's
 * `what`): applied by agents.c, answered by agents_answer.c. */
static const struct gf_op_kind agent_kind = {
	.name = "agent",
	.apply = gf__agents_apply,
	.answer = gf__agents_answer,
	.release = agent_release,
};

/* An op for node name, or NULL with the request answered (a name too
 * long: no node has one, 404). */
static struct agent_op *new_op(struct gf_call *c, struct gf_http_req *r,
			       enum agent_what what, const char *name)
{
	struct agent_op *x = gf_calloc(1, sizeof(*x));
	x->op.kind = &agent_kind;
	x->op.grant = c->grant;
	x->what = what;
	if (gf_fmt(x->node, sizeof(x->node), "%s", name) == 0)
		return x;
	gf__op_free(&x->op);
	(void)gf_reply_error(r, 404, "not-registered",
			     "node '%.48s...' is not registered", name);
	return NULL;
}

/* The heartbeat members of body into op->hb: 0, or answered 400. */
static int read_heartbeat(struct gf_http_req *r, const struct gf_jv *body,
			  struct agent_op *op)
{
	struct gf_err e;
	gf_err_clear(&e);
	op->hb = gf_calloc(1, sizeof(*op->hb));
	if (gf_np_heartbeat_read(body, op->hb, &e) == 0)
		return 0;
	(void)gf_reply_error(r, e.code == GF_ETOOBIG ? 413 : 400, "invalid",
			     "%s", e.msg);
	return e.code;
}

int gf__nodes_put(struct gf_http_req *r, void *arg)
{
	struct gf_call *c = arg;
	struct gf_service *s = c->s;
	const char *name = gf_req_param(r, "name");
	if (strlen(name) >= GF_NODE_NAME_MAX)
		return gf_reply_error(r, 400, "invalid",
				      "a node name is 1 to %d bytes",
				      GF_NODE_NAME_MAX - 1);
	struct gf_jv *body;
	if (gf_req_json(r, &body))
		return 0; /* answered 400 */
	struct agent_op *op = new_op(c, r, AG_REGISTER, name);
	if (!op) { /* the name's length is checked above: cannot happen */
		gf_jv_free(body);
		return 0;
	}
	struct gf_err e;
	gf_err_clear(&e);
	op->inv = gf_calloc(1, sizeof(*op->inv));
	if (gf_np_inventory_read(body, op->inv, &e) != 0) {
		gf_jv_free(body);
		gf__op_free(&op->op);
		return gf_reply_error(r, e.code == GF_ETOOBIG ? 413 : 400,
				      "invalid", "%s", e.msg);
	}
	int rc = read_heartbeat(r, body, op);
	gf_jv_free(body);
	if (rc) {
		gf__op_free(&op->op);
		return 0;
	}
	size_t len;
	const char *text = gf_req_body(r, &len);
	/* kept per agent (GET /v1/nodes/NAME, the store): without the
	 * white space, most of a `topo --json` document's bytes */
	op->body = gf_strndup(text, len);
	op->body_len = gf_json_squeeze(op->body, len);
	op->body = gf_reallocarray(op->body, op->body_len + 1, 1);
	return gf__service_hold(s, r, &op->op);
}

int gf__nodes_heartbeat(struct gf_http_req *r, void *arg)
{
	struct gf_call *c = arg;
	struct gf_service *s = c->s;
	const char *name = gf_req_param(r, "name");
	size_t len;
	const char *text = gf_req_body(r, &len);
	uint64_t h = gf_hash_bytes(text ? text : "", text ? len : 0);
	if (gf__agents_repeat(s, r, name, h))
		return 0; /* answered: the same as its last quick one */
	struct gf_jv *body;
	if (gf_req_json(r, &body))
		return 0;
	struct agent_op *op = new_op(c, r, AG_HEARTBEAT, name);
	if (!op) {
		gf_jv_free(body);
		return 0;
	}
	op->hb_hash = h;
	int rc = read_heartbeat(r, body, op);
	gf_jv_free(body);
	if (rc || gf__agents_quick(s, r, op)) {
		gf__op_free(&op->op);
		return 0; /* answered */
	}
	return gf__service_hold(s, r, &op->op);
}

/* "30s", "500ms", "30" (seconds) into ms, at most GF_NP_MAX_WAIT_S s;
 * -1 when malformed. */
static long parse_wait(const char *v)
{
	char *end;
	double x = strtod(v, &end);
	if (end == v || x < 0)
		return -1;
	if (!strcmp(end, "ms"))
		x /= 1000;
	else if (*end && strcmp(end, "s"))
		return -1;
	if (x > GF_NP_MAX_WAIT_S)
		return -1;
	return (long)(x * 1000);
}

int gf__nodes_assignments(struct gf_http_req *r, void *arg)
{
	struct gf_call *c = arg;
	struct gf_service *s = c->s;
	const char *name = gf_req_param(r, "name");
	const char *w = gf_req_query(r, "wait"), *a = gf_req_query(r, "after");
	long wait = w ? parse_wait(w) : GF_NP_DEFAULT_WAIT_S * 1000L;
	if (wait < 0)
		return gf_reply_error(r, 400, "invalid",
				      "'wait': expected a time such as 30s or "
				      "500ms, at most %ds",
				      GF_NP_MAX_WAIT_S);
	char *end = NULL;
	unsigned long long after = a ? strtoull(a, &end, 10) : 0;
	if (a && (!*a || *end || *a == '-'))
		return gf_reply_error(r, 400, "invalid",
				      "'after': expected a generation number");
	struct agent_op *op = new_op(c, r, AG_POLL, name);
	if (!op)
		return 0;
	op->after = a ? (uint64_t)after : 0;
	op->deadline = gf__mono_ms() + wait;
	if (gf__agents_park(s, r, op))
		return 0; /* answered, or held on its node */
	return gf__service_hold(s, r, &op->op);
}

int gf__nodes_get_one(struct gf_http_req *r, void *arg)
{
	struct gf_call *c = arg;
	struct gf_service *s = c->s;
	const char *name = gf_req_param(r, "name");
	struct gf_buf b;
	struct gf_json j;
	gf_json_open(&j, &b, 4u << 20);
	pthread_mutex_lock(&s->ctl_lock);
	int i = s->leading ? gf_ctl_node_find(s->ctl, name) : -1;
	if (i >= 0) {
		size_t len = 0;
		const char *inv = gf__agents_inventory(s->ag, i, &len);
		gf__node_json(&j, s, i);
		if (inv) { /* the node's object, with its inventory */
			while (b.len && b.data[b.len - 1] != '}')
				b.len--;
			if (b.len)
				b.len--;
			gf_buf_puts(&b, ",\n  \"inventory\": ");
			gf_buf_append(&b, inv, len);
			gf_buf_puts(&b, "\n}\n");
		}
	}
	bool leading = s->leading;
	pthread_mutex_unlock(&s->ctl_lock);
	int rc;
	if (!leading)
		rc = gf_reply_error(r, 503, "standby",
				    "this server does not lead");
	else if (i < 0)
		rc = gf_reply_error(r, 404, "not-found", "no node '%.48s'",
				    name);
	else if (gf_buf_error(&b))
		rc = gf_reply_error(r, 500, "too-big",
				    "the node is over 4 MiB");
	else
		rc = gf_reply_json(r, 200, &b);
	gf_buf_release(&b);
	return rc;
}

/* ---- the agents as a feature of the service -------------------------- */

static int agents_load(void *arg, struct gf_err *e)
{
	return gf__agents_load(arg, e);
}

static void agents_loaded(void *arg)
{
	gf__agents_index_all(arg);
}

static void agents_step(void *arg, int64_t now, struct gf_batch *b)
{
	gf__agents_sweep(arg, now, b);
}

static void agents_changed(void *arg, const struct gf_job *j)
{
	gf__agents_job_changed(arg, j);
}

static int agents_commit(void *arg, struct gf_err *e)
{
	return gf__agents_commit(arg, e);
}

static void agents_wake(void *arg, bool all, unsigned status)
{
	gf__agents_wake(arg, all, status);
}

static void agents_free(void *arg)
{
	gf__agents_free(arg);
}

int gf__agents_register(struct gf_service *s)
{
	s->ag = gf__agents_new(s);
	struct gf_feature f = {
		.name = "agents",
		.arg = s->ag,
		.load_nodes = agents_load,
		.loaded = agents_loaded,
		.step = agents_step,
		.changed = agents_changed,
		.commit = agents_commit,
		.wake = agents_wake,
		.free = agents_free,
	};
	int rc = gf__service_register(s, &f);
	if (rc) {
		gf__agents_free(s->ag);
		s->ag = NULL;
	}
	return rc;
}
