/*
 * api.h - the Kubernetes API server, as the extender's bind needs it, on
 * the shared HTTP client (server/client.h; k8s_client.c): in-cluster config
 * (the service account's token and CA, the KUBERNETES_SERVICE_HOST/PORT the
 * kubelet sets) or a kubeconfig (server, CA, token or client certificate of a
 * context); the pod's annotations patched, its Binding created, a pod read,
 * pods listed.
 *
 * Requests are what kube-scheduler and kubectl send: JSON bodies,
 * "Accept: application/json", "Authorization: Bearer TOKEN" when there
 * is a token; a Binding is POST .../pods/NAME/binding with the pod's
 * uid as the precondition (metadata.uid, as the default binder sets
 * it); annotations are a JSON merge patch (application/merge-patch+json)
 * that carries the uid too, so a pod recreated under the same name is
 * never annotated by mistake.  A token file is read again when it
 * changes (projected service-account tokens rotate).
 *
 * Thread-safety: a struct gf_k8s_api is read-only once made; each
 * thread calls through its own struct gf_k8s_conn (a kept-alive
 * connection).  Errors say the method, the path, the status and the API
 * server's message ("cannot POST /api/v1/namespaces/ml/pods/train-0/
 * binding: 409 Conflict: pod train-0 is already assigned to node
 * gpu-a01").
 */
#ifndef GF_K8S_API_H
#define GF_K8S_API_H

#include <stdbool.h>
#include <stddef.h>

#include <gpufleet/err.h>

#include "util/buf.h"
#include "util/json.h"

#define GF_K8S_PATH_MAX	      512
#define GF_K8S_SA_DIR	      "/var/run/secrets/kubernetes.io/serviceaccount"
#define GF_K8S_API_TIMEOUT    5000	  /* ms: kube-scheduler's own */
#define GF_K8S_ANSWER_MAX     (64u << 20) /* a page of a pod list */
#define GF_K8S_LIST_PAGE      500
#define GF_K8S_CREDENTIAL_MAX (1u << 20)

struct gf_k8s_api_cfg {
	char server[GF_K8S_PATH_MAX];	  /* "https://10.96.0.1:443" */
	char token_file[GF_K8S_PATH_MAX]; /* read again when it changes */
	char *token;			  /* or a fixed one; owned */
	char ca_file[GF_K8S_PATH_MAX];
	char *ca_pem; /* owned: certificate-authority-data */
	size_t ca_len;
	char cert_file[GF_K8S_PATH_MAX], key_file[GF_K8S_PATH_MAX];
	char *cert_pem, *key_pem; /* owned: client-*-data */
	size_t cert_len, key_len;
	bool insecure;		   /* insecure-skip-tls-verify */
	char tls_server_name[256]; /* tls-server-name; "" the URL's host */
	long timeout_ms;
};

void gf_k8s_api_cfg_release(struct gf_k8s_api_cfg *c);

/*
 * In-cluster config: host and port (NULL: $KUBERNETES_SERVICE_HOST and
 * $KUBERNETES_SERVICE_PORT), the token and CA under dir (NULL:
 * GF_K8S_SA_DIR).  0, or GF_ENOTFOUND (not in a cluster: no host) or
 * an error naming the file.
 */
int gf_k8s_api_incluster(const char *dir, const char *host, const char *port,
			 struct gf_k8s_api_cfg *c,
			 struct gf_err *e) GF_MUST_CHECK;

/*
 * A kubeconfig's context (NULL: its current-context): the cluster's
 * server, certificate-authority(-data), insecure-skip-tls-verify; the
 * user's token, tokenFile, client-certificate(-data), client-key(-data).
 * Relative paths are taken from the file's directory.  0, or an error
 * naming the file and the key ("'kubeconfig': context 'x' not found";
 * an exec or auth-provider user is refused: gpufleet runs no plugin).
 */
int gf_k8s_api_kubeconfig(const char *path, const char *context,
			  struct gf_k8s_api_cfg *c,
			  struct gf_err *e) GF_MUST_CHECK;

struct gf_k8s_api;
/* Takes c's contents (c is left empty). */
struct gf_k8s_api *gf_k8s_api_new(struct gf_k8s_api_cfg *c);
void gf_k8s_api_free(struct gf_k8s_api *api);
const char *gf_k8s_api_server(const struct gf_k8s_api *api);

struct gf_k8s_conn;
struct gf_k8s_conn *gf_k8s_conn_new(struct gf_k8s_api *api);
void gf_k8s_conn_free(struct gf_k8s_conn *c);

struct gf_k8s_answer {
	long status;
	struct gf_buf body; /* release with gf_k8s_answer_release */
};
void gf_k8s_answer_release(struct gf_k8s_answer *a);

/*
 * One exchange: method ("GET", "POST", "PATCH", ...), path (from "/",
 * with its query), body and its content type (NULL: none).  0 when an
 * answer came (any status: *a holds it), or a negative code with e
 * naming the method, the server, the path and the cause.
 */
int gf_k8s_call(struct gf_k8s_conn *c, const char *method, const char *path,
		const char *ctype, const char *body, size_t len,
		struct gf_k8s_answer *a, struct gf_err *e) GF_MUST_CHECK;

/* The Binding of pod ns/name (uid: precondition, "" none) to node, with
 * annotations keys[i] = vals[i] (n of them): the API server merges a
 * Binding's annotations into the pod as it sets spec.nodeName, in one
 * write (pods/binding's storage), so a pod bound by gpufleet carries what
 * it was given.  0, or GF_ECONFLICT (409: bound already, or another
 * uid), GF_ENOTFOUND (404), another code; e says the API server's
 * message. */
int gf_k8s_bind(struct gf_k8s_conn *c, const char *ns, const char *name,
		const char *uid, const char *node, const char *const *keys,
		const char *const *vals, int n, struct gf_err *e) GF_MUST_CHECK;

/* GET the pod (caller frees *out with gf_jv_free): 0, GF_ENOTFOUND. */
int gf_k8s_pod_get(struct gf_k8s_conn *c, const char *ns, const char *name,
		   struct gf_jv **out, struct gf_err *e) GF_MUST_CHECK;

/*
 * Every pod (field_selector: a fieldSelector, NULL none), page by page
 * (limit/continue), each given to fn (borrowed for the call); fn's
 * non-zero return stops and is returned.  0 or an error.
 */
typedef int (*gf_k8s_pod_fn)(void *arg, const struct gf_jv *pod);
int gf_k8s_pods_list(struct gf_k8s_conn *c, const char *field_selector,
		     gf_k8s_pod_fn fn, void *arg,
		     struct gf_err *e) GF_MUST_CHECK;

#endif
