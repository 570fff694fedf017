/*
 * test_tls.c - HTTPS (src/server/tls.c) and the clients' rules for
 * tokens (src/server/client.c): which hosts are loopback, which URLs a
 * token may go to (no traffic), a token to a host that is not loopback
 * refused by gf_client_request before any name is resolved, https://
 * addresses, the PEM files checked and named, and a real server on a
 * loopback port over TLS: trusted with the CA (--ca), refused without
 * it, plain http to it answered by nothing, and the client-certificate
 * check false on plain http and for a client that presents none
 * (tests/integration/tls.sh presents real client certificates, good and
 * bad); the Kubernetes API client over the same client (client.h's
 * TLS options: CA as a file or PEM, the server's name, verification
 * off, a client certificate as PEM or files, the bearer token and the
 * Accept header sent); and
 * F11: the controller with tokens refuses the extender's routes to a
 * caller without a client certificate, even one with an admin's token.
 *
 * The certificates below were made once with openssl for these tests
 * only (EC P-256, valid until 2126): a CA, and a server certificate it
 * signed for 127.0.0.1 and localhost, with its key.  Nothing else uses
 * them.
 */
#include <errno.h>
#include <sys/stat.h>

#include "controller/service.h"
#include "helpers.h"
#include "k8s/api.h"
#include "server/client.h"
#include "server/server.h"
#include "server/tls.h"
#include "util/file.h"
#include "util/mem.h"

static const char CA_PEM[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIBljCCAT2gAwIBAgIUcqDKnHVR2aWKZCFmZrn0iJI+ya0wCgYIKoZIzj0EAwIw\n"
	"IDEeMBwGA1UEAwwVZ3B1ZmxlZXQgdW5pdCB0ZXN0IENBMCAXDTI2MTIwMjAyMTI0\n"
	"N1oYDzIxMjYxMTA4MDIxMjQ3WjAgMR4wHAYDVQQDDBVncHVmbGVldCB1bml0IHRl\n"
	"c3QgQ0EwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAATY5SupgJ+03aAhwdkWUR6M\n"
	"Tl5DV4ZZmouRleZluDRhtC9jHUfDIRArRPmFIG/pRWzc9Zdg4QosYSEV4gL8m0uB\n"
	"o1MwUTAdBgNVHQ4EFgQUoGXj/8EPMnCcdNTKXBnZn3mtE3wwHwYDVR0jBBgwFoAU\n"
	"oGXj/8EPMnCcdNTKXBnZn3mtE3wwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQD\n"
	"AgNHADBEAiBapGH0Y5lhojUOGwoP62c6VzxBBEufEKctXyd9604cfwIgZSQtaq1n\n"
	"3vQcHDuVbYt+P8ZAaLVyc+0LeyBF6Sn+I6Y=\n"
	"-----END CERTIFICATE-----\n";

static const char SERVER_PEM[] =
	"-----BEGIN CERTIFICATE-----\n"
	"MIIBqzCCAVGgAwIBAgIUM18KzKJU4F9bIfhum8Fi1JGdiswwCgYIKoZIzj0EAwIw\n"
	"IDEeMBwGA1UEAwwVZ3B1ZmxlZXQgdW5pdCB0ZXN0IENBMCAXDTI2MTIwMjAyMTI0\n"
	"N1oYDzIxMjYxMTA4MDIxMjQ3WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcq\n"
	"hkjOPQIBBggqhkjOPQMBBwNCAASVeCoH0qg9klhwj0/aaIxmOE15BiTTbwGSLUJu\n"
	"fNk4XwCZpSkqb/emUqJGdaRRBb5x5AjzGixAzdghTeJQN5aTo3MwcTAaBgNVHREE\n"
	"EzARhwR/AAABgglsb2NhbGhvc3QwEwYDVR0lBAwwCgYIKwYBBQUHAwEwHQYDVR0O\n"
	"BBYEFCNdwpKuDVqIKmngD9FOlJoXtDZtMB8GA1UdIwQYMBaAFKBl4//BDzJwnHTU\n"
	"ylwZ2Z95rRN8MAoGCCqGSM49BAMCA0gAMEUCIQD/d2vS4D+QSCjonm9ydP77rnFu\n"
	"BTDH/yS56EW6+yEwrgIgHFayx6Zgt1z2M29fectUM9n2DjJ39PD4xWXRBU7N2ps=\n"
	"-----END CERTIFICATE-----\n";

static const char SERVER_KEY[] = /* a test key, for this file only */
	"-----BEGIN PRIVATE KEY-----\n"
	"MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgsXMuFCvJ5xk52kgF\n"
	"BsT1KF2ooerWVlEypraDceA1RN+hRANCAASVeCoH0qg9klhwj0/aaIxmOE15BiTT\n"
	"bwGSLUJufNk4XwCZpSkqb/emUqJGdaRRBb5x5AjzGixAzdghTeJQN5aT\n"
	"-----END PRIVATE KEY-----\n";

static char dir[64];
static char ca_file[128], cert_file[128], key_file[128], junk_file[128];

static void write_file(const char *path, const char *text)
{
	struct gf_err e;
	assert_int_equal(gf_file_write_atomic(path, text, strlen(text), &e), 0);
}

static int files_up(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/gf-test-tls-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(ca_file, sizeof(ca_file), "%s/ca.crt", dir);
	snprintf(cert_file, sizeof(cert_file), "%s/server.crt", dir);
	snprintf(key_file, sizeof(key_file), "%s/server.key", dir);
	snprintf(junk_file, sizeof(junk_file), "%s/junk.pem", dir);
	write_file(ca_file, CA_PEM);
	write_file(cert_file, SERVER_PEM);
	write_file(key_file, SERVER_KEY);
	write_file(junk_file, "not a certificate\n");
	return 0;
}

static int files_down(void **state)
{
	(void)state;
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/k8s'", dir);
	if (system(cmd) != 0)
		return -1;
	unlink(ca_file);
	unlink(cert_file);
	unlink(key_file);
	unlink(junk_file);
	rmdir(dir);
	return 0;
}

/* --- the rules for tokens (no traffic) -------------------------------- */

static void test_loopback_hosts(void **state)
{
	(void)state;
	static const char *const yes[] = { "127.0.0.1",	  "127.0.0.2",
					   "127.255.1.9", "localhost",
					   "LocalHost",	  "::1",
					   "[::1]" };
	static const char *const no[] = { "10.0.0.1",
					  "0.0.0.0",
					  "128.0.0.1",
					  "gpu-01",
					  "localhost.evil",
					  "127.0.0.1.nip.io",
					  "::ffff:10.0.0.1",
					  "[::2]",
					  "",
					  "[::1",
					  "example.com" };
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		assert_true(gf_client_host_is_loopback(yes[i]));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		assert_false(gf_client_host_is_loopback(no[i]));
}

static void test_token_safe(void **state)
{
	(void)state;
	char why[256];
	static const char *const safe[] = {
		"http://127.0.0.1:9500/v1/jobs", "http://localhost:9500",
		"http://[::1]:9500/v1/nodes",	 "https://gpu-01:9500/v1/jobs",
		"HTTPS://10.0.0.1:9500",	 "http://127.3.2.1",
	};
	for (size_t i = 0; i < sizeof(safe) / sizeof(safe[0]); i++)
		assert_true(
			gf_client_token_safe(safe[i], false, why, sizeof(why)));
	static const char *const clear[] = {
		"http://gpu-01:9500/v1/jobs",
		"http://10.0.0.1:9500",
		"http://127.0.0.1@10.0.0.1:9500/", /* the host is after '@' */
		"http://localhost.evil:80/",
		"gpu-01:9500", /* no scheme: curl's http */
	};
	for (size_t i = 0; i < sizeof(clear) / sizeof(clear[0]); i++) {
		why[0] = '\0';
		assert_false(gf_client_token_safe(clear[i], false, why,
						  sizeof(why)));
		assert_non_null(strstr(why, "--insecure-http"));
		assert_true(
			gf_client_token_safe(clear[i], true, why, sizeof(why)));
	}
	assert_false(gf_client_token_safe("http://gpu-01:9500/v1/jobs", false,
					  why, sizeof(why)));
	assert_string_equal(why,
			    "refusing to send a bearer token in clear over "
			    "http to 'gpu-01', which is not loopback: use "
			    "https:// (with --ca FILE for a private CA), or "
			    "give --insecure-http");
}

/* The client refuses before any traffic: the name is never resolved
 * (GF_ENOTFOUND would say it was). */
static void test_client_refuses_clear_token(void **state)
{
	(void)state;
	struct gf_client_req q = { .url = "http://gpu-01.invalid:9500/v1/jobs",
				   .token = "adminadminadmin0001" };
	struct gf_client_answer a;
	struct gf_err e;
	gf_err_clear(&e);
	assert_int_equal(gf_client_request(NULL, &q, &a, &e), GF_EAUTH);
	assert_non_null(strstr(e.msg, "cannot GET http://gpu-01.invalid:9500/"
				      "v1/jobs: refusing to send a bearer "
				      "token in clear"));
	gf_client_answer_release(&a);
	/* with --insecure-http it goes on, to the resolver (which fails:
	 * .invalid never resolves) */
	q.insecure_http = true;
	q.timeout_ms = 3000;
	int rc = gf_client_request(NULL, &q, &a, &e);
	assert_true(rc != 0 && rc != GF_EAUTH);
	gf_client_answer_release(&a);
	/* no token, nothing to protect */
	q = (struct gf_client_req){ .url = "http://gpu-01.invalid:9500/",
				    .timeout_ms = 3000 };
	rc = gf_client_request(NULL, &q, &a, &e);
	assert_true(rc != 0 && rc != GF_EAUTH);
	gf_client_answer_release(&a);
}

static void test_base_url_https(void **state)
{
	(void)state;
	char out[128];
	assert_null(gf_client_base_url("https://ctl.example:9500/", 9400, out,
				       sizeof(out)));
	assert_string_equal(out, "https://ctl.example:9500");
	assert_null(gf_client_base_url("HTTPS://ctl", 9500, out, sizeof(out)));
	assert_string_equal(out, "https://ctl:9500");
	assert_null(gf_client_base_url("ctl", 9500, out, sizeof(out)));
	assert_string_equal(out, "http://ctl:9500");
	assert_non_null(
		gf_client_base_url("ftp://ctl", 9500, out, sizeof(out)));
	assert_non_null(gf_client_base_url("https://ctl:9500/v1", 9500, out,
					   sizeof(out)));
}

/* --- the PEM files ----------------------------------------------------- */

static void test_tls_load(void **state)
{
	(void)state;
	struct gf_tls t;
	struct gf_err e;
	assert_int_equal(gf_tls_load(&t, cert_file, key_file, ca_file, &e), 0);
	assert_non_null(t.ca_pem);
	gf_tls_release(&t);
	assert_int_equal(gf_tls_load(&t, cert_file, key_file, NULL, &e), 0);
	assert_null(t.ca_pem);
	gf_tls_release(&t);
	/* each file named with its option */
	assert_int_equal(gf_tls_load(&t, junk_file, key_file, NULL, &e),
			 GF_EPARSE);
	assert_non_null(strstr(e.msg, "--tls-cert '"));
	assert_non_null(strstr(e.msg, "junk.pem': not a PEM certificate"));
	gf_tls_release(&t);
	assert_int_equal(gf_tls_load(&t, cert_file, junk_file, NULL, &e),
			 GF_EPARSE);
	assert_non_null(strstr(e.msg, "--tls-key '"));
	gf_tls_release(&t);
	assert_int_equal(gf_tls_load(&t, cert_file, key_file, junk_file, &e),
			 GF_EPARSE);
	assert_non_null(strstr(e.msg, "--client-ca '"));
	assert_non_null(strstr(e.msg, "no PEM certificate"));
	gf_tls_release(&t);
	/* the CA's certificate with the server's key: not its key */
	assert_int_equal(gf_tls_load(&t, ca_file, key_file, NULL, &e),
			 GF_EINVAL);
	assert_non_null(strstr(e.msg, "is not the key of the certificate"));
	gf_tls_release(&t);
	char missing[160];
	snprintf(missing, sizeof(missing), "%s/absent.pem", dir);
	assert_int_equal(gf_tls_load(&t, missing, key_file, NULL, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "--tls-cert: "));
	gf_tls_release(&t);
}

/* --- a server over TLS --------------------------------------------------- */

static int who(struct gf_http_req *r, void *arg)
{
	(void)arg;
	char why[256], body[400];
	bool ok = gf_req_client_cert_ok(r, why, sizeof(why));
	snprintf(body, sizeof(body), "%s: %s", ok ? "cert" : "none",
		 ok ? "" : why);
	return gf_reply(r, 200, "text/plain", body, strlen(body));
}

static void get(const char *url, const char *ca, int want_rc,
		const char *want_body)
{
	struct gf_client_req q = { .url = url, .ca = ca, .timeout_ms = 60000 };
	struct gf_client_answer a;
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_client_request(NULL, &q, &a, &e);
	if (rc != want_rc)
		fail_msg("GET %s: %d (%s), want %d", url, rc, e.msg, want_rc);
	if (want_body)
		assert_string_equal(gf_buf_str(&a.body), want_body);
	if (rc == GF_EAUTH)
		assert_non_null(strstr(e.msg, "the server's certificate is "
					      "not trusted"));
	gf_client_answer_release(&a);
}

static void serve_tls(unsigned threads)
{
	static const struct gf_route routes[] = {
		{ GF_HTTP_GET, "/who", who, 0, "the client's certificate" },
	};
	struct gf_tls t;
	struct gf_err e;
	assert_int_equal(gf_tls_load(&t, cert_file, key_file, ca_file, &e), 0);
	struct gf_server_opts o = { .name = "test",
				    .listen = "127.0.0.1:0",
				    .threads = threads,
				    .tls = &t };
	struct gf_server *s;
	assert_int_equal(gf_server_start(&s, routes, 1, &o, &e), 0);
	assert_true(strncmp(gf_server_url(s), "https://127.0.0.1:", 18) == 0);
	char url[128];
	snprintf(url, sizeof(url), "%swho", gf_server_url(s));
	get(url, ca_file, 0, "none: no client certificate was presented");
	get(url, NULL, GF_EAUTH, NULL); /* the system's CAs: not ours */
	snprintf(url, sizeof(url), "https://localhost:%u/who",
		 gf_server_port(s));
	get(url, ca_file, 0, NULL);
	/* plain http to the TLS port: no HTTP answer */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/who",
		 gf_server_port(s));
	struct gf_client_req q = { .url = url, .timeout_ms = 60000 };
	struct gf_client_answer a;
	assert_true(gf_client_request(NULL, &q, &a, &e) != 0);
	gf_client_answer_release(&a);
	gf_server_stop(s);
	gf_tls_release(&t);
}

static void test_server_tls(void **state)
{
	(void)state;
	serve_tls(0);
	serve_tls(2);
}

/* --- the Kubernetes API client on client.h's TLS options ----------------- */

/* GET .../pods/NAME: the pod, with what the request carried. */
static int k8s_pod(struct gf_http_req *r, void *arg)
{
	(void)arg;
	char why[256], body[1024];
	const char *tok = gf_req_bearer(r), *acc = gf_req_header(r, "Accept");
	bool cert = gf_req_client_cert_ok(r, why, sizeof(why));
	snprintf(body, sizeof(body),
		 "{\"metadata\": {\"name\": \"%s\", \"annotations\": "
		 "{\"token\": \"%s\", \"accept\": \"%s\", \"cert\": "
		 "\"%s\"}}}",
		 gf_req_param(r, "name"), tok ? tok : "", acc ? acc : "",
		 cert ? "yes" : why);
	return gf_reply(r, 200, "application/json", body, strlen(body));
}

/* The pod "p" fetched through cfg: gf_k8s_pod_get's code; the answer's
 * metadata.annotations[key] into out. */
static int k8s_get(struct gf_k8s_api_cfg *cfg, const char *key, char *out,
		   size_t size, struct gf_err *e)
{
	/* a loaded machine under ASan reads the system's CA bundle slowly:
	 * the answer, not the clock, decides */
	cfg->timeout_ms = 60000;
	struct gf_k8s_api *api = gf_k8s_api_new(cfg);
	struct gf_k8s_conn *c = gf_k8s_conn_new(api);
	struct gf_jv *v = NULL;
	int rc = gf_k8s_pod_get(c, "ml", "p", &v, e);
	const char *s = gf_jv_str(gf_jv_get(
		gf_jv_get(gf_jv_get(v, "metadata"), "annotations"), key));
	snprintf(out, size, "%s", s ? s : "");
	gf_jv_free(v);
	gf_k8s_conn_free(c);
	gf_k8s_api_free(api);
	return rc;
}

static void test_k8s_client_tls(void **state)
{
	(void)state;
	static const struct gf_route routes[] = {
		{ GF_HTTP_GET, "/api/v1/namespaces/{ns}/pods/{name}", k8s_pod,
		  0, "a pod" },
	};
	struct gf_tls t;
	struct gf_err e;
	assert_int_equal(gf_tls_load(&t, cert_file, key_file, ca_file, &e), 0);
	struct gf_server_opts o = { .name = "test",
				    .listen = "127.0.0.1:0",
				    .tls = &t };
	struct gf_server *s;
	assert_int_equal(gf_server_start(&s, routes, 1, &o, &e), 0);
	struct gf_k8s_api_cfg cfg;
	char got[256];
	/* the CA as a file; the token and Accept sent */
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.server, sizeof(cfg.server), "%s", gf_server_url(s));
	snprintf(cfg.ca_file, sizeof(cfg.ca_file), "%s", ca_file);
	cfg.token = gf_strdup("tok-1");
	assert_int_equal(k8s_get(&cfg, "token", got, sizeof(got), &e), 0);
	assert_string_equal(got, "tok-1");
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.server, sizeof(cfg.server), "%s", gf_server_url(s));
	snprintf(cfg.ca_file, sizeof(cfg.ca_file), "%s", ca_file);
	assert_int_equal(k8s_get(&cfg, "accept", got, sizeof(got), &e), 0);
	assert_string_equal(got, "application/json");
	/* the CA as PEM (certificate-authority-data) */
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.server, sizeof(cfg.server), "%s", gf_server_url(s));
	cfg.ca_pem = gf_strdup(CA_PEM);
	cfg.ca_len = strlen(CA_PEM);
	assert_int_equal(k8s_get(&cfg, "cert", got, sizeof(got), &e), 0);
	assert_string_equal(got, "no client certificate was presented");
	/* no CA: not trusted, the URL named */
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.server, sizeof(cfg.server), "%s", gf_server_url(s));
	int rc = k8s_get(&cfg, "cert", got, sizeof(got), &e);
	if (rc != GF_EAUTH)
		print_message("%s\n", e.msg);
	assert_int_equal(rc, GF_EAUTH);
	assert_non_null(strstr(e.msg, "cannot GET https://127.0.0.1:"));
	assert_non_null(strstr(e.msg, "/api/v1/namespaces/ml/pods/p: the "
				      "server's certificate is not trusted"));
	/* tls-server-name: the certificate checked against that name, the
	 * connection still to the URL's host */
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.server, sizeof(cfg.server), "%s", gf_server_url(s));
	snprintf(cfg.ca_file, sizeof(cfg.ca_file), "%s", ca_file);
	snprintf(cfg.tls_server_name, sizeof(cfg.tls_server_name), "localhost");
	assert_int_equal(k8s_get(&cfg, "cert", got, sizeof(got), &e), 0);
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.server, sizeof(cfg.server), "%s", gf_server_url(s));
	snprintf(cfg.ca_file, sizeof(cfg.ca_file), "%s", ca_file);
	snprintf(cfg.tls_server_name, sizeof(cfg.tls_server_name),
		 "other.example");
	assert_int_equal(k8s_get(&cfg, "cert", got, sizeof(got), &e), GF_EAUTH);
	assert_non_null(strstr(e.msg, "cannot GET https://127.0.0.1:"));
	assert_non_null(strstr(e.msg, "other.example"));
	/* insecure-skip-tls-verify */
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.server, sizeof(cfg.server), "%s", gf_server_url(s));
	cfg.insecure = true;
	assert_int_equal(k8s_get(&cfg, "cert", got, sizeof(got), &e), 0);
	/* a client certificate as PEM (client-certificate-data), then as
	 * files (client-certificate, client-key) */
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.server, sizeof(cfg.server), "%s", gf_server_url(s));
	snprintf(cfg.ca_file, sizeof(cfg.ca_file), "%s", ca_file);
	cfg.cert_pem = gf_strdup(SERVER_PEM);
	cfg.cert_len = strlen(SERVER_PEM);
	cfg.key_pem = gf_strdup(SERVER_KEY);
	cfg.key_len = strlen(SERVER_KEY);
	/* presented: the server judges it (this one is for servers only) */
	assert_int_equal(k8s_get(&cfg, "cert", got, sizeof(got), &e), 0);
	assert_non_null(strstr(got, "the client certificate does not verify"));
	memset(&cfg, 0, sizeof(cfg));
	snprintf(cfg.server, sizeof(cfg.server), "%s", gf_server_url(s));
	snprintf(cfg.ca_file, sizeof(cfg.ca_file), "%s", ca_file);
	snprintf(cfg.cert_file, sizeof(cfg.cert_file), "%s", cert_file);
	snprintf(cfg.key_file, sizeof(cfg.key_file), "%s", key_file);
	assert_int_equal(k8s_get(&cfg, "cert", got, sizeof(got), &e), 0);
	assert_non_null(strstr(got, "the client certificate does not verify"));
	gf_server_stop(s);
	gf_tls_release(&t);
}

/* GET /tok: the bearer token's length. */
static int tok_len(struct gf_http_req *r, void *arg)
{
	(void)arg;
	char body[32];
	const char *t = gf_req_bearer(r);
	snprintf(body, sizeof(body), "%zu", t ? strlen(t) : 0);
	return gf_reply(r, 200, "text/plain", body, strlen(body));
}

/* A service-account token (JWTs of 1-2 KB) goes as one header line; a
 * line break or more than 8 KiB is refused before anything is sent. */
static void test_client_token_lines(void **state)
{
	(void)state;
	static const struct gf_route routes[] = {
		{ GF_HTTP_GET, "/tok", tok_len, 0, "the token's length" },
	};
	struct gf_server_opts o = { .name = "test", .listen = "127.0.0.1:0" };
	struct gf_server *s;
	struct gf_err e;
	assert_int_equal(gf_server_start(&s, routes, 1, &o, &e), 0);
	char url[128], *tok = gf_malloc(9001);
	snprintf(url, sizeof(url), "%stok", gf_server_url(s));
	memset(tok, 'a', 2000);
	tok[2000] = '\0';
	struct gf_client_req q = { .url = url, .token = tok };
	struct gf_client_answer a;
	assert_int_equal(gf_client_request(NULL, &q, &a, &e), 0);
	assert_string_equal(gf_buf_str(&a.body), "2000");
	gf_client_answer_release(&a);
	memset(tok, 'a', 9000);
	tok[9000] = '\0';
	assert_int_equal(gf_client_request(NULL, &q, &a, &e), GF_ETOOBIG);
	assert_non_null(strstr(e.msg, "the token is longer than"));
	gf_client_answer_release(&a);
	tok[10] = '\n';
	tok[11] = '\0';
	assert_int_equal(gf_client_request(NULL, &q, &a, &e), GF_EINVAL);
	assert_non_null(strstr(e.msg, "the token is not one header line"));
	gf_client_answer_release(&a);
	gf_free(tok);
	gf_server_stop(s);
}

static void test_client_escape(void **state)
{
	(void)state;
	char out[64];
	assert_int_equal(gf_client_escape("status.phase!=Succeeded,a b/~_-.",
					  out, sizeof(out)),
			 0);
	assert_string_equal(out, "status.phase%21%3DSucceeded%2Ca%20b%2F~_-.");
	assert_int_equal(gf_client_escape("", out, sizeof(out)), 0);
	assert_string_equal(out, "");
	assert_int_equal(gf_client_escape("\xc3\xa9", out, sizeof(out)), 0);
	assert_string_equal(out, "%C3%A9");
	/* exactly full (3 bytes and the NUL), then one byte short */
	assert_int_equal(gf_client_escape("!", out, 4), 0);
	assert_int_equal(gf_client_escape("!", out, 3), GF_ETOOBIG);
	assert_string_equal(out, "");
}

/* plain http: no certificate, and said why */
static void test_client_cert_plain(void **state)
{
	(void)state;
	static const struct gf_route routes[] = {
		{ GF_HTTP_GET, "/who", who, 0, "the client's certificate" },
	};
	struct gf_server_opts o = { .name = "test", .listen = "127.0.0.1:0" };
	struct gf_server *s;
	struct gf_err e;
	assert_int_equal(gf_server_start(&s, routes, 1, &o, &e), 0);
	char url[128];
	snprintf(url, sizeof(url), "%swho", gf_server_url(s));
	get(url, NULL, 0, "none: the request came over plain http");
	gf_server_stop(s);
}

/* F11: with tokens, /k8s/filter and /k8s/bind are refused (403) to a
 * caller without a client certificate, whatever its token; nothing is
 * bound.  (serve refuses this setup without --client-ca at start; the
 * check holds for every way the service is started.) */
static void test_k8s_needs_client_cert(void **state)
{
	(void)state;
	char db[160], tokpath[160], url[256];
	snprintf(db, sizeof(db), "sqlite:%s/k8s/gf.db", dir);
	snprintf(tokpath, sizeof(tokpath), "%s/tokens", dir);
	write_file(tokpath, "adminadminadmin0001 admin\n");
	chmod(tokpath, 0600);
	struct gf_serve_config cfg;
	struct gf_auth auth;
	struct gf_err e;
	gf_serve_config_defaults(&cfg);
	assert_int_equal(gf_auth_read(tokpath, &auth, &e), 0);
	struct gf_k8s_opts ko = { .api_url = "http://127.0.0.1:9" };
	struct gf_service_opts o = { .listen = "127.0.0.1:0",
				     .db = db,
				     .cfg = &cfg,
				     .auth = &auth,
				     .agents_only = true,
				     .tick_ms = 20,
				     .k8s = &ko };
	struct gf_service *svc;
	int rc = gf_service_start(&svc, &o, &e);
	if (rc)
		fail_msg("start: %s", e.msg);
	static const char *const verbs[] = { "filter", "prioritize", "preempt",
					     "bind" };
	static const char body[] = "{\"PodName\":\"p\",\"PodNamespace\":\"ml\","
				   "\"PodUID\":\"u-1\",\"Node\":\"n\"}";
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		snprintf(url, sizeof(url), "%sk8s/%s", gf_service_url(svc),
			 verbs[i]);
		struct gf_client_req q = { .method = GF_HTTP_POST,
					   .url = url,
					   .token = "adminadminadmin0001",
					   .body = body,
					   .body_len = strlen(body) };
		struct gf_client_answer a;
		assert_int_equal(gf_client_request(NULL, &q, &a, &e), 0);
		if (a.status != 403)
			fail_msg("%s: %ld %s", url, a.status,
				 gf_buf_str(&a.body));
		assert_non_null(strstr(gf_buf_str(&a.body),
				       "client certificate signed by "
				       "--client-ca"));
		gf_client_answer_release(&a);
	}
	gf_service_stop(svc);
	gf_auth_release(&auth);
	gf_serve_config_release(&cfg);
	unlink(tokpath);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loopback_hosts),
		cmocka_unit_test(test_token_safe),
		cmocka_unit_test(test_client_refuses_clear_token),
		cmocka_unit_test(test_base_url_https),
		cmocka_unit_test(test_tls_load),
		cmocka_unit_test(test_server_tls),
		cmocka_unit_test(test_client_cert_plain),
		cmocka_unit_test(test_k8s_client_tls),
		cmocka_unit_test(test_client_escape),
		cmocka_unit_test(test_client_token_lines),
		cmocka_unit_test(test_k8s_needs_client_cert),
	};
	return cmocka_run_group_tests(tests, files_up, files_down);
}
