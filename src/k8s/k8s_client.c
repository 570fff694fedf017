/*
 * api.c - the Kubernetes API client on libcurl (api.h): connections,
 * credentials, the calls bind needs.  Invariants: a struct gf_k8s_api
 * changes only its token cache, under its lock; every exchange has the
 * config's timeout and a capped answer; a non-2xx answer becomes an
 * error carrying the API server's own message.
 */
#include "k8s/api.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/file.h"
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
	CURL *h;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;

static void curl_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

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
	snprintf(c->server, sizeof(c->server), "https://%s%s%s:%s",
		 v6 ? "[" : "", host, v6 ? "]" : "",
		 port && *port ? port : "443");
	snprintf(c->token_file, sizeof(c->token_file), "%s/token", dir);
	snprintf(c->ca_file, sizeof(c->ca_file), "%s/ca.crt", dir);
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
	pthread_once(&curl_once, curl_init);
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
	pthread_once(&curl_once, curl_init);
	struct gf_k8s_conn *c = gf_calloc(1, sizeof(*c));
	c->api = api;
	c->h = curl_easy_init();
	if (!c->h) {
		fprintf(stderr, "gpufleet: libcurl cannot make a handle\n");
		abort(); /* out of memory, as util/mem.c does */
	}
	return c;
}

void gf_k8s_conn_free(struct gf_k8s_conn *c)
{
	if (!c)
		return;
	curl_easy_cleanup(c->h);
	gf_free(c);
}

void gf_k8s_answer_release(struct gf_k8s_answer *a)
{
	gf_buf_release(&a->body);
}

/* "Authorization: Bearer ..." into out ("" without a token). */
static int auth_header(struct gf_k8s_api *api, char *out, size_t size,
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
	if (tok && strpbrk(tok, "\r\n"))
		rc = gf_err_set(e, GF_EINVAL, "the token has a line break");
	else if (tok && (size_t)snprintf(out, size, "Authorization: Bearer %s",
					 tok) >= size)
		rc = gf_err_set(e, GF_ETOOBIG, "the token is too long");
	pthread_mutex_unlock(&api->lock);
	if (!tok && api->cfg.token_file[0] && rc == 0)
		rc = gf_err_set(e, GF_ENOTFOUND, "cannot read the token '%s'",
				api->cfg.token_file);
	return rc;
}

static size_t on_data(char *p, size_t size, size_t n, void *arg)
{
	struct gf_buf *b = arg;
	return gf_buf_append(b, p, size * n) == 0 ? size * n : 0;
}

static void tls(CURL *h, const struct gf_k8s_api_cfg *cfg)
{
	if (strncmp(cfg->server, "https://", 8) != 0)
		return;
	if (cfg->insecure) {
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (cfg->ca_file[0])
		curl_easy_setopt(h, CURLOPT_CAINFO, cfg->ca_file);
	if (cfg->ca_pem) {
		struct curl_blob b = { cfg->ca_pem, cfg->ca_len,
				       CURL_BLOB_NOCOPY };
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &b);
	}
	if (cfg->cert_file[0])
		curl_easy_setopt(h, CURLOPT_SSLCERT, cfg->cert_file);
	if (cfg->key_file[0])
		curl_easy_setopt(h, CURLOPT_SSLKEY, cfg->key_file);
	if (cfg->cert_pem) {
		struct curl_blob b = { cfg->cert_pem, cfg->cert_len,
				       CURL_BLOB_NOCOPY };
		curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &b);
		curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	}
	if (cfg->key_pem) {
		struct curl_blob b = { cfg->key_pem, cfg->key_len,
				       CURL_BLOB_NOCOPY };
		curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &b);
		curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
	}
}

int gf_k8s_call(struct gf_k8s_conn *c, const char *method, const char *path,
		const char *ctype, const char *body, size_t len,
		struct gf_k8s_answer *a, struct gf_err *e)
{
	const struct gf_k8s_api_cfg *cfg = &c->api->cfg;
	a->status = 0;
	gf_buf_init(&a->body, GF_K8S_ANSWER_MAX);
	char url[2 * GF_K8S_PATH_MAX + 64], auth[8192], ct[128];
	if ((size_t)snprintf(url, sizeof(url), "%s%s", cfg->server, path) >=
	    sizeof(url))
		return gf_err_set(e, GF_ETOOBIG, "cannot %s %s: path too long",
				  method, path);
	int rc = auth_header(c->api, auth, sizeof(auth), e);
	if (rc)
		return rc;
	struct curl_slist *hd = curl_slist_append(NULL, "Accept: "
							"application/json");
	if (auth[0])
		hd = curl_slist_append(hd, auth);
	if (ctype) {
		snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
		hd = curl_slist_append(hd, ct);
	}
	hd = curl_slist_append(hd, "Expect:");
	CURL *h = c->h;
	curl_easy_reset(h); /* options only: the connection stays */
	char errbuf[CURL_ERROR_SIZE] = "";
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, cfg->timeout_ms);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, cfg->timeout_ms);
	curl_easy_setopt(h, CURLOPT_NOPROXY, "127.0.0.1,localhost,::1");
	curl_easy_setopt(h, CURLOPT_USERAGENT, "gpufleet-k8s-extender");
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hd);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &a->body);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)len);
	} else if (!strcmp(method, "GET")) {
		curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	}
	tls(h, cfg);
	CURLcode cr = curl_easy_perform(h);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(hd);
	if (cr != CURLE_OK) {
		rc = cr == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT
		     : cr == CURLE_COULDNT_CONNECT  ? -ECONNREFUSED
		     : cr == CURLE_WRITE_ERROR	    ? GF_ETOOBIG
						    : -EIO;
		gf_log(GF_LOG_DEBUG, "k8s", "%s %s: %s", method, url,
		       errbuf[0] ? errbuf : curl_easy_strerror(cr));
		return gf_err_set(e, rc, "cannot %s %s: %s", method, url,
				  errbuf[0] ? errbuf : curl_easy_strerror(cr));
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &a->status);
	gf_log(GF_LOG_DEBUG, "k8s", "%s %s: %ld, %zu bytes", method, url,
	       a->status, a->body.len);
	return 0;
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
		const char *uid, const char *node, struct gf_err *e)
{
	if (!path_safe(ns) || !path_safe(name))
		return gf_err_set(e, GF_EINVAL, "bad pod name '%.64s/%.64s'",
				  ns, name);
	char path[GF_K8S_PATH_MAX + 64];
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/binding",
		 ns, name);
	struct gf_buf b;
	struct gf_json j;
	gf_buf_init(&b, 64u << 10);
	gf_json_init(&j, &b);
	gf_json_obj_begin(&j, NULL);
	gf_json_str(&j, "apiVersion", "v1");
	gf_json_str(&j, "kind", "Binding");
	gf_json_obj_begin(&j, "metadata");
	gf_json_str(&j, "name", name);
	gf_json_str(&j, "namespace", ns);
	if (uid && *uid)
		gf_json_str(&j, "uid", uid);
	gf_json_obj_end(&j);
	gf_json_obj_begin(&j, "target");
	gf_json_str(&j, "apiVersion", "v1");
	gf_json_str(&j, "kind", "Node");
	gf_json_str(&j, "name", node);
	gf_json_obj_end(&j);
	gf_json_obj_end(&j);
	struct gf_k8s_answer a;
	int rc = gf_json_error(&j)
			 ? gf_err_set(e, GF_ETOOBIG, "binding too large")
			 : exchange(c, "POST", path, "application/json", &b, &a,
				    e);
	if (!gf_json_error(&j))
		gf_k8s_answer_release(&a);
	gf_buf_release(&b);
	return rc;
}

int gf_k8s_annotate(struct gf_k8s_conn *c, const char *ns, const char *name,
		    const char *uid, const char *const *keys,
		    const char *const *vals, int n, struct gf_err *e)
{
	if (!path_safe(ns) || !path_safe(name))
		return gf_err_set(e, GF_EINVAL, "bad pod name '%.64s/%.64s'",
				  ns, name);
	char path[GF_K8S_PATH_MAX + 64];
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
	struct gf_buf b;
	struct gf_json j;
	gf_buf_init(&b, 256u << 10);
	gf_json_init(&j, &b);
	gf_json_obj_begin(&j, NULL);
	gf_json_obj_begin(&j, "metadata");
	if (uid && *uid)
		gf_json_str(&j, "uid", uid);
	gf_json_obj_begin(&j, "annotations");
	for (int i = 0; i < n; i++)
		gf_json_str(&j, keys[i], vals[i]);
	gf_json_obj_end(&j);
	gf_json_obj_end(&j);
	gf_json_obj_end(&j);
	struct gf_k8s_answer a;
	int rc = gf_json_error(&j)
			 ? gf_err_set(e, GF_ETOOBIG, "annotations too large")
			 : exchange(c, "PATCH", path,
				    "application/merge-patch+json", &b, &a, e);
	if (!gf_json_error(&j))
		gf_k8s_answer_release(&a);
	gf_buf_release(&b);
	return rc;
}

int gf_k8s_pod_get(struct gf_k8s_conn *c, const char *ns, const char *name,
		   struct gf_jv **out, struct gf_err *e)
{
	*out = NULL;
	if (!path_safe(ns) || !path_safe(name))
		return gf_err_set(e, GF_EINVAL, "bad pod name '%.64s/%.64s'",
				  ns, name);
	char path[GF_K8S_PATH_MAX + 64];
	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s", ns, name);
	struct gf_k8s_answer a;
	int rc = exchange(c, "GET", path, NULL, NULL, &a, e);
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
	snprintf(cont, size, "%s", next ? next : "");
	if (next && strlen(next) >= size)
		rc = gf_err_set(e, GF_ETOOBIG, "a continue token too long");
	gf_jv_free(v);
	return rc;
}

int gf_k8s_pods_list(struct gf_k8s_conn *c, const char *field_selector,
		     gf_k8s_pod_fn fn, void *arg, struct gf_err *e)
{
	char cont[4096] = "", path[8192];
	char *fs = field_selector ? curl_easy_escape(c->h, field_selector, 0)
				  : NULL;
	int rc = 0;
	do {
		char *ct = cont[0] ? curl_easy_escape(c->h, cont, 0) : NULL;
		snprintf(path, sizeof(path), "/api/v1/pods?limit=%d%s%s%s%s",
			 GF_K8S_LIST_PAGE, fs ? "&fieldSelector=" : "",
			 fs ? fs : "", ct ? "&continue=" : "", ct ? ct : "");
		curl_free(ct);
		rc = list_page(c, path, fn, arg, cont, sizeof(cont), e);
	} while (rc == 0 && cont[0]);
	curl_free(fs);
	return rc;
}
