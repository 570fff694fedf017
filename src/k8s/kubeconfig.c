/*
 * kubeconfig.c - a kubeconfig's context as API credentials (api.h):
 * clusters, users and contexts looked up by name, as kubectl does, with
 * relative file paths taken from the kubeconfig's directory and the
 * *-data fields base64-decoded.  Exec plugins and auth providers are
 * refused: gpufleet runs no external program for credentials.
 */
#include <stdio.h>
#include <string.h>
#include <yaml.h>

#include "k8s/api.h"
#include "util/file.h"
#include "util/mem.h"

struct kc {
	yaml_document_t doc;
	const char *path;
	char dir[GF_K8S_PATH_MAX];
	struct gf_err *e;
};

static yaml_node_t *node(struct kc *k, int id)
{
	return yaml_document_get_node(&k->doc, id);
}

static const char *scalar(yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE
		       ? (const char *)n->data.scalar.value
		       : NULL;
}

/* The value of key in mapping m, or NULL. */
static yaml_node_t *get(struct kc *k, yaml_node_t *m, const char *key)
{
	if (!m || m->type != YAML_MAPPING_NODE)
		return NULL;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
	     p < m->data.mapping.pairs.top; p++) {
		const char *s = scalar(node(k, p->key));
		if (s && !strcmp(s, key))
			return node(k, p->value);
	}
	return NULL;
}

/* The `inner` mapping of the entry named name in list `list`. */
static yaml_node_t *named(struct kc *k, const char *list, const char *name,
			  const char *inner)
{
	yaml_node_t *l = get(k, yaml_document_get_root_node(&k->doc), list);
	if (!l || l->type != YAML_SEQUENCE_NODE)
		return NULL;
	for (yaml_node_item_t *i = l->data.sequence.items.start;
	     i < l->data.sequence.items.top; i++) {
		yaml_node_t *x = node(k, *i);
		const char *n = scalar(get(k, x, "name"));
		if (n && !strcmp(n, name))
			return get(k, x, inner);
	}
	return NULL;
}

static int b64val(int c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Base64 (white space skipped, '=' ends it) into a new buffer. */
static int b64(struct kc *k, const char *key, const char *in, char **out,
	       size_t *len)
{
	size_t n = strlen(in);
	char *o = gf_malloc(n / 4 * 3 + 4);
	uint32_t acc = 0;
	int bits = 0;
	size_t w = 0;
	for (const char *p = in; *p && *p != '='; p++) {
		if (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
			continue;
		int v = b64val((unsigned char)*p);
		if (v < 0) {
			gf_free(o);
			return gf_err_set(k->e, GF_EINVAL,
					  "'%s': %s: not base64", k->path, key);
		}
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			o[w++] = (char)(acc >> bits & 0xff);
		}
	}
	o[w] = '\0';
	*out = o;
	*len = w;
	return 0;
}

/* A path key (relative to the kubeconfig's directory) into out. */
static int path_of(struct kc *k, yaml_node_t *m, const char *key, char *out,
		   size_t size)
{
	const char *s = scalar(get(k, m, key));
	if (!s || !*s)
		return 0;
	int w = s[0] == '/' ? snprintf(out, size, "%s", s)
			    : snprintf(out, size, "%s/%s", k->dir, s);
	if (w < 0 || (size_t)w >= size)
		return gf_err_set(k->e, GF_ETOOBIG, "'%s': %s: path too long",
				  k->path, key);
	return 0;
}

static int cluster_of(struct kc *k, yaml_node_t *cl, struct gf_k8s_api_cfg *c)
{
	const char *server = scalar(get(k, cl, "server"));
	if (!server || !*server || strlen(server) >= sizeof(c->server))
		return gf_err_set(k->e, GF_EINVAL, "'%s': cluster: no server",
				  k->path);
	snprintf(c->server, sizeof(c->server), "%s", server);
	const char *ins = scalar(get(k, cl, "insecure-skip-tls-verify"));
	c->insecure = ins && !strcmp(ins, "true");
	const char *data = scalar(get(k, cl, "certificate-authority-data"));
	if (data)
		return b64(k, "certificate-authority-data", data, &c->ca_pem,
			   &c->ca_len);
	return path_of(k, cl, "certificate-authority", c->ca_file,
		       sizeof(c->ca_file));
}

static int user_of(struct kc *k, yaml_node_t *u, struct gf_k8s_api_cfg *c)
{
	if (get(k, u, "exec") || get(k, u, "auth-provider"))
		return gf_err_set(k->e, GF_ENOTSUP,
				  "'%s': the user runs an exec plugin or an "
				  "auth provider: give gpufleet a token or a "
				  "client certificate",
				  k->path);
	const char *tok = scalar(get(k, u, "token"));
	if (tok && *tok)
		c->token = gf_strdup(tok);
	int rc = path_of(k, u, "tokenFile", c->token_file,
			 sizeof(c->token_file));
	const char *cd = scalar(get(k, u, "client-certificate-data"));
	const char *kd = scalar(get(k, u, "client-key-data"));
	if (rc == 0 && cd)
		rc = b64(k, "client-certificate-data", cd, &c->cert_pem,
			 &c->cert_len);
	if (rc == 0 && kd)
		rc = b64(k, "client-key-data", kd, &c->key_pem, &c->key_len);
	if (rc == 0)
		rc = path_of(k, u, "client-certificate", c->cert_file,
			     sizeof(c->cert_file));
	if (rc == 0)
		rc = path_of(k, u, "client-key", c->key_file,
			     sizeof(c->key_file));
	return rc;
}

static int read_context(struct kc *k, const char *context,
			struct gf_k8s_api_cfg *c)
{
	yaml_node_t *root = yaml_document_get_root_node(&k->doc);
	const char *ctx =
		context ? context : scalar(get(k, root, "current-context"));
	if (!ctx || !*ctx)
		return gf_err_set(k->e, GF_EINVAL,
				  "'%s': no current-context (give one)",
				  k->path);
	yaml_node_t *x = named(k, "contexts", ctx, "context");
	if (!x)
		return gf_err_set(k->e, GF_ENOTFOUND,
				  "'%s': context '%.80s' not found", k->path,
				  ctx);
	const char *cn = scalar(get(k, x, "cluster"));
	const char *un = scalar(get(k, x, "user"));
	yaml_node_t *cl = cn ? named(k, "clusters", cn, "cluster") : NULL;
	yaml_node_t *u = un ? named(k, "users", un, "user") : NULL;
	if (!cl)
		return gf_err_set(k->e, GF_ENOTFOUND,
				  "'%s': cluster '%.80s' of context '%.80s' "
				  "not found",
				  k->path, cn ? cn : "", ctx);
	int rc = cluster_of(k, cl, c);
	if (rc == 0 && u)
		rc = user_of(k, u, c);
	return rc;
}

int gf_k8s_api_kubeconfig(const char *path, const char *context,
			  struct gf_k8s_api_cfg *c, struct gf_err *e)
{
	memset(c, 0, sizeof(*c));
	char *text = NULL;
	size_t len = 0;
	int rc = gf_file_read(path, GF_K8S_CREDENTIAL_MAX, &text, &len, e);
	if (rc)
		return rc;
	struct kc k = { .path = path, .e = e };
	const char *slash = strrchr(path, '/');
	snprintf(k.dir, sizeof(k.dir), "%.*s", slash ? (int)(slash - path) : 1,
		 slash ? path : ".");
	yaml_parser_t p;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	if (!yaml_parser_load(&p, &k.doc)) {
		rc = gf_err_set(e, GF_EPARSE, "'%s':%zu: %s", path,
				p.problem_mark.line + 1,
				p.problem ? p.problem : "not YAML");
		yaml_parser_delete(&p);
		gf_free(text);
		return rc;
	}
	if (!yaml_document_get_root_node(&k.doc))
		rc = gf_err_set(e, GF_EINVAL, "'%s': empty", path);
	else
		rc = read_context(&k, context, c);
	yaml_document_delete(&k.doc);
	yaml_parser_delete(&p);
	gf_free(text);
	if (rc)
		gf_k8s_api_cfg_release(c);
	return rc;
}
