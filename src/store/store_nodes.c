/*
 * store_nodes.c - the nodes table: each node that joined, by name, with
 * the inventory it registered (the controller's JSON text, not parsed
 * here) and when.  One row per node, replaced whole on each
 * registration.
 *
 * Invariants: only the leader writes (as jobs); every row written or read
 * has a name of 1..GF_STORE_NODE_NAME_MAX-1 bytes and an inventory of
 * 1..GF_STORE_INVENTORY_MAX bytes, both UTF-8 without NUL; a load hands
 * over nodes only once every row passed, so a corrupt row hands over
 * nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_impl.h"
#include "util/fmt.h"
#include "util/mem.h"

int gf__store_check_doc(const char *name, size_t nlen, const char *inv,
			size_t len, struct gf_err *e)
{
	if (nlen == 0 || nlen >= GF_STORE_NODE_NAME_MAX)
		return gf_err_set(e, GF_EINVAL,
				  "node name: expected 1 to %d bytes, got %zu",
				  GF_STORE_NODE_NAME_MAX - 1, nlen);
	if (!gf__store_utf8_ok(name, nlen))
		return gf_err_set(e, GF_EINVAL, "node name: not valid UTF-8");
	if (len == 0)
		return gf_err_set(e, GF_EINVAL, "node '%s': no inventory",
				  name);
	if (len > GF_STORE_INVENTORY_MAX)
		return gf_err_set(e, GF_ETOOBIG,
				  "node '%s': inventory of %zu bytes, at most "
				  "%u",
				  name, len, GF_STORE_INVENTORY_MAX);
	if (!gf__store_utf8_ok(inv, len))
		return gf_err_set(e, GF_EINVAL,
				  "node '%s': inventory: not valid UTF-8",
				  name);
	return 0;
}

int gf__store_leader_only(struct gf_store *s, struct gf_err *e)
{
	if (s->leading)
		return 0;
	gf_err_set(e, GF_ECONFLICT,
		   "write refused: this server does not hold the leader lock");
	return gf__store_err_prefix(s, e);
}

int gf__store_put_doc(struct gf_store *s, const char *sql, const char *name,
		      const char *text, size_t len, const int64_t *v, int nv,
		      struct gf_err *e)
{
	int rc;
	size_t nlen = strnlen(name, GF_STORE_NODE_NAME_MAX);
	if ((rc = gf__store_check_doc(name, nlen, text, len, e)))
		return gf__store_err_prefix(s, e);
	if ((rc = gf__store_leader_only(s, e)))
		return rc;
	struct gf__param p[4] = {
		{ .kind = GF__P_TEXT, .s = name, .len = nlen },
		{ .kind = GF__P_TEXT, .s = text, .len = len },
	};
	if (nv > 2)
		nv = 2;
	for (int i = 0; i < nv; i++)
		p[2 + i] = (struct gf__param){ .kind = GF__P_INT, .i = v[i] };
	rc = s->ops->exec_params(s, sql, 2 + nv, p, e);
	return rc ? gf__store_err_prefix(s, e) : 0;
}

int gf__store_delete_doc(struct gf_store *s, const char *sql, const char *name,
			 struct gf_err *e)
{
	int rc;
	if ((rc = gf__store_leader_only(s, e)))
		return rc;
	const struct gf__param p[1] = {
		{ .kind = GF__P_TEXT, .s = name, .len = strlen(name) },
	};
	rc = s->ops->exec_params(s, sql, 1, p, e);
	return rc ? gf__store_err_prefix(s, e) : 0;
}

int gf_store_put_node(struct gf_store *s, const char *name,
		      const char *inventory, size_t len, int64_t now_ms,
		      struct gf_err *e)
{
	return gf__store_put_doc(
		s,
		"INSERT INTO nodes (name, inventory, registered_ms) "
		"VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET "
		"inventory = excluded.inventory, "
		"registered_ms = excluded.registered_ms",
		name, inventory, len, &now_ms, 1, e);
}

int gf_store_delete_node(struct gf_store *s, const char *name, struct gf_err *e)
{
	return gf__store_delete_doc(s, "DELETE FROM nodes WHERE name = $1",
				    name, e);
}

/* clang-format off */
const struct gf__doc_table gf__store_docs[] = {
	[GF__DOC_NODES] = { "SELECT name, inventory, registered_ms FROM nodes ORDER BY name",
		"nodes", "node", 0, INT64_MAX, "NULL where a value belongs",
		"column 'registered_ms': not a time" },
	[GF__DOC_SERVICES] = { "SELECT name, spec, replicas FROM services ORDER BY name",
		"services", "service", 0, GF_STORE_SERVICE_MAX,
		"a NULL or a count out of range", "a NULL or a count out of range" },
};
/* clang-format on */

struct doc_row {
	char *name, *text;
	size_t len;
	int64_t v;
};

struct doc_rows {
	const struct gf__doc_table *t;
	struct doc_row *v;
	size_t n, cap;
	struct gf_err *e;
};

bool gf__store_cell_i64(const struct gf__cell *c, int64_t *out)
{
	char tmp[24];
	if (!c->p || c->len == 0 || c->len >= sizeof(tmp))
		return false;
	memcpy(tmp, c->p, c->len);
	tmp[c->len] = '\0';
	char *end;
	long long v = strtoll(tmp, &end, 10);
	if (*end)
		return false;
	*out = (int64_t)v;
	return true;
}

static int take_doc(const struct gf__cell *c, void *arg)
{
	struct doc_rows *l = arg;
	const struct gf__doc_table *t = l->t;
	char name[GF_STORE_NODE_NAME_MAX]; /* for messages, cut */
	size_t nlen = c[0].p ? c[0].len : 0;
	gf_note(name, sizeof(name), "%.*s",
		(int)(nlen < sizeof(name) ? nlen : sizeof(name) - 1),
		c[0].p ? c[0].p : "");
	int64_t v;
	if (!c[0].p || !c[1].p)
		return gf_err_set(l->e, GF_EPARSE, "%s: %s '%s': %s", t->table,
				  t->what, name, t->null_msg);
	if (!gf__store_cell_i64(&c[2], &v) || v < t->lo || v > t->hi)
		return gf_err_set(l->e, GF_EPARSE, "%s: %s '%s': %s", t->table,
				  t->what, name, t->range_msg);
	int rc = gf__store_check_doc(c[0].p, c[0].len, c[1].p, c[1].len, l->e);
	if (rc || memchr(c[0].p, '\0', c[0].len)) {
		if (l->e) {
			char tmp[GF_ERR_MSG_MAX];
			gf_note(tmp, sizeof(tmp), "%s", l->e->msg);
			gf_err_set(l->e, GF_EPARSE, "%s: %s", t->table, tmp);
		}
		return GF_EPARSE;
	}
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->v = gf_reallocarray(l->v, l->cap, sizeof(*l->v));
	}
	struct doc_row *r = &l->v[l->n++];
	r->name = gf_strndup(c[0].p, c[0].len);
	r->text = gf_strndup(c[1].p, c[1].len);
	r->len = c[1].len;
	r->v = v;
	return 0;
}

int gf__store_load_docs(struct gf_store *s, int table,
			int (*fn)(const char *name, const char *text,
				  size_t len, int64_t v, void *arg),
			void *arg, struct gf_err *e)
{
	struct doc_rows l = { .t = &gf__store_docs[table], .e = e };
	int rc = s->ops->select(s, l.t->sql, 3, take_doc, &l, e);
	if (rc)
		gf__store_err_prefix(s, e);
	for (size_t i = 0; i < l.n; i++) {
		if (rc == 0)
			rc = fn(l.v[i].name, l.v[i].text, l.v[i].len, l.v[i].v,
				arg);
		gf_free(l.v[i].name);
		gf_free(l.v[i].text);
	}
	gf_free(l.v);
	return rc;
}

int gf_store_load_nodes(struct gf_store *s,
			int (*fn)(const char *name, const char *inventory,
				  size_t len, int64_t registered_ms, void *arg),
			void *arg, struct gf_err *e)
{
	return gf__store_load_docs(s, GF__DOC_NODES, fn, arg, e);
}

int gf_store_node_drain(struct gf_store *s, const char *name,
			const char *reason, struct gf_err *e)
{
	int rc;
	size_t nlen = strnlen(name, GF_STORE_NODE_NAME_MAX);
	if (nlen == 0 || nlen >= GF_STORE_NODE_NAME_MAX ||
	    !gf__store_utf8_ok(name, nlen))
		return gf_err_set(e, GF_EINVAL, "node name: bad");
	if (reason && (strlen(reason) >= GF_STORE_DRAIN_MAX ||
		       !gf__store_utf8_ok(reason, strlen(reason))))
		return gf_err_set(e, GF_EINVAL,
				  "node '%s': drain reason: expected UTF-8 "
				  "text under %d bytes",
				  name, GF_STORE_DRAIN_MAX);
	if ((rc = gf__store_leader_only(s, e)))
		return rc;
	/* $1 first: SQLite numbers $N parameters as they appear */
	struct gf__param p[2] = {
		{ .kind = GF__P_NULL },
		{ .kind = GF__P_TEXT, .s = name, .len = nlen },
	};
	if (reason)
		p[0] = (struct gf__param){ .kind = GF__P_TEXT,
					   .s = reason,
					   .len = strlen(reason) };
	rc = s->ops->exec_params(
		s, "UPDATE nodes SET drain = $1 WHERE name = $2", 2, p, e);
	return rc ? gf__store_err_prefix(s, e) : 0;
}

struct drain_rows {
	int (*fn)(const char *name, const char *reason, void *arg);
	void *arg;
	struct gf_err *e;
};

static int take_drain(const struct gf__cell *c, void *arg)
{
	struct drain_rows *l = arg;
	char name[GF_STORE_NODE_NAME_MAX], reason[GF_STORE_DRAIN_MAX];
	if (!c[0].p || !c[1].p || c[0].len == 0 || c[0].len >= sizeof(name) ||
	    c[1].len >= sizeof(reason) || memchr(c[0].p, '\0', c[0].len) ||
	    memchr(c[1].p, '\0', c[1].len))
		return gf_err_set(l->e, GF_EPARSE,
				  "nodes: column 'drain': a bad row");
	memcpy(name, c[0].p, c[0].len);
	name[c[0].len] = '\0';
	memcpy(reason, c[1].p, c[1].len);
	reason[c[1].len] = '\0';
	return l->fn(name, reason, l->arg);
}

int gf_store_load_drains(struct gf_store *s,
			 int (*fn)(const char *name, const char *reason,
				   void *arg),
			 void *arg, struct gf_err *e)
{
	struct drain_rows l = { .fn = fn, .arg = arg, .e = e };
	int rc = s->ops->select(s,
				"SELECT name, drain FROM nodes WHERE drain IS "
				"NOT NULL ORDER BY name",
				2, take_drain, &l, e);
	return rc ? gf__store_err_prefix(s, e) : 0;
}
