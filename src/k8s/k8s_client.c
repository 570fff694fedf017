/*
 * k8s_client.c - the Kubernetes API client (api.h) on the shared HTTP
 * client (server/client.h, which holds libcurl and the TLS options):
 * credentials, the calls bind needs.  Invariants: a struct gf_k8s_api
 * changes only its token cache, under its lock; every exchange has the
 * config's timeout and a capped answer; a non-2xx answer becomes an
 * error carrying the API server's own message.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "k8s/api.h"
#include "server/client.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

struct gf_k8s_api {
	struct gf_k8s_api_cfg cfg;
	pthread_mutex_t lock; /* the token read from token_file */
	char *token_now;
	struct timespec token_mtime;
};

struct gf_k8s_conn {
	struct gf_k8s_api *api;
	struct gf_client *http;
};

void gf_k8s_api_cfg_release(struct gf_k8s_api_cfg *c)
{
	gf_free(c->token);
	gf_free(c->ca_pem);
	gf_free(c->cert_pem);
	gf_free(c->key_pem);
	memset(c, 0, sizeof(*c));
}

int gf_k8s_api_incluster(const char *dir, const char *host, const char *port,
			 struct gf_k8s_api_cfg *c, struct gf_err *e)
{
	memset(c, 0, sizeof(*c));
	dir = dir ? dir : GF_K8S_SA_DIR;
	host = host ? host : getenv("KUBERNETES_SERVICE_HOST"); /* NOLINT */
	port = port ? port : getenv("KUBERNETES_SERVICE_PORT"); /* NOLINT */
	if (!host || !*host)
		return gf_err_set(e, GF_ENOTFOUND,
				  "not in a cluster: KUBERNETES_SERVICE_HOST "
				  "is not set");
	bool v6 = strchr(host, ':') != NULL;
	if (gf_fmt(c->server, sizeof(c->server), "https://%s%s%s:%s",
		   v6 ? "[" : "", host, v6 ? "]" : "",
		   port && *port ? port : "443"))
		return gf_err_set(
			e, GF_ETOOBIG,
			"KUBERNETES_SERVICE_HOST '%.64s...': too long", host);
	if (gf_fmt(c->token_file, sizeof(c->token_file), "%s/token", dir) ||
	    gf_fmt(c->ca_file, sizeof(c->ca_file), "%s/ca.crt", dir))
		return gf_err_set(e, GF_ETOOBIG, "'%.64s...': path too long",
				  dir);
	struct stat st;
	if (stat(c->token_file, &st) != 0)
		return gf_err_set(e, -errno, "cannot read '%s': %s",
				  c->token_file, gf_strerror(-errno));
	if (stat(c->ca_file, &st) != 0)
		return gf_err_set(e, -errno, "cannot read '%s': %s", c->ca_file,
				  gf_strerror(-errno));
	return 0;
}

struct gf_k8s_api *gf_k8s_api_new(struct gf_k8s_api_cfg *c)
{
	struct gf_k8s_api *api = gf_calloc(1, sizeof(*api));
	api->cfg = *c;
	memset(c, 0, sizeof(*c));
	if (api->cfg.timeout_ms <= 0)
		api->cfg.timeout_ms = GF_K8S_API_TIMEOUT;
	size_t n = strlen(api->cfg.server);
	while (n && api->cfg.server[n - 1] == '/')
		api->cfg.server[--n] = '\0';
	pthread_mutex_init(&api->lock, NULL);
	return api;
}

void gf_k8s_api_free(struct gf_k8s_api *api)
{
	if (!api)
		return;
	gf_k8s_api_cfg_release(&api->cfg);
	gf_free(api->token_now);
	pthread_mutex_destroy(&api->lock);
	gf_free(api);
}

const char *gf_k8s_api_server(const struct gf_k8s_api *api)
{
	return api->cfg.server;
}

struct gf_k8s_conn *gf_k8s_conn_new(struct gf_k8s_api *api)
{
	struct gf_k8s_conn *c = gf_calloc(1, sizeof(*c));
	c->api = api;
	c->http = gf_client_new();
	return c;
}

void gf_k8s_conn_free(struct gf_k8s_conn *c)
{
	if (!c)
		return;
	gf_client_free(c->http);
	gf_free(c);
}

void gf_k8s_answer_release(struct gf_k8s_answer *a)
{
	gf_buf_release(&a->body);
}

/* The token now (read again when its file changed) into out ("" for
 * none); 0, or an error naming the file. */
static int token_now(struct gf_k8s_api *api, char *out, size_t size,
		     struct gf_err *e)
{
	out[0] = '\0';
	const char *tok = api->cfg.token;
	pthread_mutex_lock(&api->lock);
	if (!tok && api->cfg.token_file[0]) {
		struct stat st;
		if (stat(api->cfg.token_file, &st) == 0 &&
		    (!api->token_now ||
		     st.st_mtim.tv_sec != api->token_mtime.tv_sec ||
		     st.st_mtim.tv_nsec != api->token_mtime.tv_nsec)) {
			char *text = NULL;
			size_t len = 0;
			struct gf_err fe;
			if (gf_file_read(api->cfg.token_file,
					 GF_K8S_CREDENTIAL_MAX, &text, &len,
					 &fe) == 0) {
				while (len && (text[len - 1] == '\n' ||
					       text[len - 1] == '\r' ||
					       text[len - 1] == ' '))
					text[--len] = '\0';
				gf_free(api->token_now);
				api->token_now = text;
				api->token_mtime = st.st_mtim;
			}
		}
		tok = api->token_now;
	}
	int rc = 0;
	if (tok && gf_fmt(out, size, "%s", tok))
		rc = gf_err_set(e, GF_ETOOBIG, "the token is too long");
	pthread_mutex_unlock(&api->lock);
	if (!tok && api->cfg.token_file[0] && rc == 0)
		rc = gf_err_set(e, GF_ENOTFOUND, "cannot read the token '%s'",
				api->cfg.token_file);
	return rc;
}

int gf_k8s_call(struct gf_k8s_conn *c, const char *method, const char *path,
		const char *ctype, const char *body, size_t len,
		struct gf_k8s_answer *a, struct gf_err *e)
{
	const struct gf_k8s_api_cfg *cfg = &c->api->cfg;
	a->status = 0;
	gf_buf_init(&a->body, GF_K8S_ANSWER_MAX);
	char url[2 * GF_K8S_PATH_MAX + 64], tok[GF_CLIENT_HEADER_MAX];
	if (gf_fmt(url, sizeof(url), "%s%s", cfg->server, path))
		return gf_err_set(e, GF_ETOOBIG, "cannot %s %s: path too long",
				  method, path);
	unsigned m = strcmp(method, "PATCH") == 0
			     ? GF_HTTP_PATCH
			     : gf_http_method_parse(method);
	if (!m)
		return gf_err_set(e, GF_EINVAL, "cannot %s %s: not a method",
				  method, path);
	int rc = token_now(c->api, tok, sizeof(tok), e);
	if (rc)
		return rc;
	struct gf_client_tls tls = {
		.ca_pem = cfg->ca_pem,
		.ca_len = cfg->ca_len,
		.cert_file = cfg->cert_file[0] ? cfg->cert_file : NULL,
		.key_file = cfg->key_file[0] ? cfg->key_file : NULL,
		.cert_pem = cfg->cert_pem,
		.cert_len = cfg->cert_len,
		.key_pem = cfg->key_pem,
		.key_len = cfg->key_len,
		.insecure = cfg->insecure,
		.server_name =
			cfg->tls_server_name[0] ? cfg->tls_server_name : NULL,
	};
	struct gf_client_req q = {
		.method = m,
		.url = url,
		.token = tok[0] ? tok : NULL,
		.body = body,
		.body_len = len,
		.content_type = ctype,
		.timeout_ms = cfg->timeout_ms,
		.answer_max = GF_K8S_ANSWER_MAX,
		.ca = cfg->ca_file[0] ? cfg->ca_file : NULL,
		/* the kubeconfig names the server: its token goes there as
		 * kubectl sends it, http:// included */
		.insecure_http = true,
		.tls = &tls,
		.accept = "application/json",
		.user_agent = "gpufleet-k8s-extender",
	};
	struct gf_client_answer ans;
	rc = gf_client_request(c->http, &q, &ans, e);
	if (rc == 0) {
		gf_buf_release(&a->body);
		a->status = ans.status;
		a->body = ans.body; /* the answer's buffer moves to a */
	} else {
		gf_client_answer_release(&ans);
	}
	return rc;
}

static const char *status_text(long st)
{
	switch (st) {
	case 400:
		return "Bad Request";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "Not Found";
	case 409:
		return "Conflict";
	case 422:
		return "Unprocessable Entity";
	case 429:
		return "Too Many Requests";
	case 500:
		return "Internal Server Error";
	case 503:
		return "Service Unavailable";
	default:
		return "";
	}
}

/* A non-2xx answer as an error with the Status object's message. */
static int refused(const char *method, const char *path,
		   const struct gf_k8s_answer *a, struct gf_err *e)
{
	struct gf_jv *v = NULL;
	struct gf_err pe;
	const char *msg = NULL;
	if (a->body.len &&
	    gf_jv_parse(gf_buf_str(&a->body), a->body.len, &v, &pe) == 0)
		msg = gf_jv_str(gf_jv_get(v, "message"));
	int rc = a->status == 404			? GF_ENOTFOUND
		 : a->status == 409			? GF_ECONFLICT
		 : a->status == 401 || a->status == 403 ? GF_EAUTH
		 : a->status == 400 || a->status == 422 ? GF_EINVAL
							: -EIO;
	gf_err_set(e, rc, "cannot %s %s: %ld %s%s%.200s", method, path,
		   a->status, status_text(a->status), msg ? ": " : "",
		   msg ? msg : "");
	gf_jv_free(v);
	return rc;
}

/* A name usable in a path: a DNS subdomain's characters. */
static bool path_safe(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '-' || *s == '.'))
			return false;
	return true;
}

/* The path of pod ns/name, then tail ("" or "/binding"), into path
 * (GF_K8S_PATH_MAX + 64 bytes): 0, or GF_EINVAL / GF_ETOOBIG. */
static int pod_path(const char *ns, const char *name, const char *tail,
		    char *path, struct gf_err *e)
{
	if (!path_safe(ns) || !path_safe(name))
		return gf_err_set(e, GF_EINVAL, "bad pod name '%.64s/%.64s'",
				  ns, name);
	if (gf_fmt(path, GF_K8S_PATH_MAX + 64,
		   "/api/v1/namespaces/%s/pods/%s%s", ns, name, tail))
		return gf_err_set(e, GF_ETOOBIG,
				  "pod name '%.64s/%.64s...' too long", ns,
				  name);
	return 0;
}

static int exchange(struct gf_k8s_conn *c, const char *method, const char *path,
		    const char *ctype, struct gf_buf *body,
		    struct gf_k8s_answer *a, struct gf_err *e)
{
	int rc = gf_k8s_call(c, method, path, ctype,
			     body ? gf_buf_str(body) : NULL,
			     body ? body->len : 0, a, e);
	if (rc == 0 && (a->status < 200 || a->status > 299))
		rc = refused(method, path, a, e);
	return rc;
}

int gf_k8s_bind(struct gf_k8s_conn *c, const char *ns, const char *name,
		const char *uid, const char *node, const char *const *keys,
		const char *const *vals, int n, struct gf_err *e)
{
	char path[GF_K8S_PATH_MAX + 64];
	int rc = pod_path(ns, name, "/binding", path, e);
	if (rc)
		return rc;
	struct gf_buf b;
	struct gf_json j;
	gf_json_open(&j, &b, 256u << 10);
	gf_json_obj_begin(&j, NULL);
	gf_json_str(&j, "apiVersion", "v1");
	gf_json_str(&j, "kind", "Binding");
	gf_json_obj_begin(&j, "metadata");
	gf_json_str(&j, "name", name);
	gf_json_str(&j, "namespace", ns);
	if (uid && *uid)
		gf_json_str(&j, "uid", uid);
	if (n > 0) {
		gf_json_obj_begin(&j, "annotations");
		for (int i = 0; i < n; i++)
			gf_json_str(&j, keys[i], vals[i]);
		gf_json_obj_end(&j);
	}
	gf_json_obj_end(&j);
	gf_json_obj_begin(&j, "target");
	gf_json_str(&j, "apiVersion", "v1");
	gf_json_str(&j, "kind", "Node");
	gf_json_str(&j, "name", node);
	gf_json_obj_end(&j);
	gf_json_obj_end(&j);
	if (gf_json_error(&j)) {
		rc = gf_err_set(e, GF_ETOOBIG, "binding too large");
	} else {
		struct gf_k8s_answer a;
		rc = exchange(c, "POST", path, "application/json", &b, &a, e);
		gf_k8s_answer_release(&a);
	}
	gf_buf_release(&b);
	return rc;
}

int gf_k8s_pod_get(struct gf_k8s_conn *c, const char *ns, const char *name,
		   struct gf_jv **out, struct gf_err *e)
{
	*out = NULL;
	char path[GF_K8S_PATH_MAX + 64];
	int rc = pod_path(ns, name, "", path, e);
	if (rc)
		return rc;
	struct gf_k8s_answer a;
	rc = exchange(c, "GET", path, NULL, NULL, &a, e);
	if (rc == 0)
		rc = gf_jv_parse(gf_buf_str(&a.body), a.body.len, out, e);
	gf_k8s_answer_release(&a);
	return rc;
}

/* One page of a pod list: each item to fn; the continue token into
 * cont ("" at the end). */
static int list_page(struct gf_k8s_conn *c, const char *path, gf_k8s_pod_fn fn,
		     void *arg, char *cont, size_t size, struct gf_err *e)
{
	struct gf_k8s_answer a;
	struct gf_jv *v = NULL;
	int rc = exchange(c, "GET", path, NULL, NULL, &a, e);
	if (rc == 0)
		rc = gf_jv_parse(gf_buf_str(&a.body), a.body.len, &v, e);
	gf_k8s_answer_release(&a);
	if (rc)
		return rc;
	const struct gf_jv *items = gf_jv_get(v, "items");
	for (size_t i = 0; rc == 0 && i < gf_jv_len(items); i++)
		rc = fn(arg, gf_jv_at(items, i));
	const char *next =
		gf_jv_str(gf_jv_get(gf_jv_get(v, "metadata"), "continue"));
	if (gf_fmt(cont, size, "%s", next ? next : ""))
		rc = gf_err_set(e, GF_ETOOBIG, "a continue token too long");
	gf_jv_free(v);
	return rc;
}

int gf_k8s_pods_list(struct gf_k8s_conn *c, const char *field_selector,
		     gf_k8s_pod_fn fn, void *arg, struct gf_err *e)
{
	char cont[4096] = "", path[8192], fs[2048] = "", ct[3 * 4096];
	if (field_selector && gf_client_escape(field_selector, fs, sizeof(fs)))
		return gf_err_set(e, GF_ETOOBIG,
				  "fieldSelector '%.64s...': too long",
				  field_selector);
	int rc = 0;
	do {
		/* cont fits: each byte at most 3 in ct */
		if (gf_client_escape(cont, ct, sizeof(ct)) ||
		    gf_fmt(path, sizeof(path), "/api/v1/pods?limit=%d%s%s%s%s",
			   GF_K8S_LIST_PAGE, fs[0] ? "&fieldSelector=" : "", fs,
			   ct[0] ? "&continue=" : "", ct))
			return gf_err_set(e, GF_ETOOBIG,
					  "a continue token too long");
		rc = list_page(c, path, fn, arg, cont, sizeof(cont), e);
	} while (rc == 0 && cont[0]);
	return rc;
}
