/*
 * tls.c - the server's TLS (tls.h): the PEM files read and checked with
 * GnuTLS before libmicrohttpd sees them (so that a bad file is named,
 * not "libmicrohttpd refused to start"), the daemon's TLS options, and
 * the per-request client-certificate check.
 *
 * Invariants: a loaded gf_tls holds NUL-terminated PEM text (what
 * libmicrohttpd's MEM options take) whose certificate and key parse and
 * match; the check of a client certificate is GnuTLS's own chain
 * verification against the trust libmicrohttpd set from ca_pem, with the
 * TLS client purpose, on the connection's session, never a comparison
 * of names.
 */
#include "server/tls.h"

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "server/server_int.h"
#include "util/dynlib.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/log.h"
#include "util/mem.h"

/*
 * GnuTLS, opened the first time a certificate is read (util/dynlib.h);
 * libmicrohttpd has it loaded already when a server runs.  gnutls_free is
 * a variable (a pointer to GnuTLS's free) behind a macro of its name.
 */
#define TLS_FUNCS(X)                                    \
	X(gnutls_certificate_allocate_credentials)      \
	X(gnutls_certificate_free_credentials)          \
	X(gnutls_certificate_set_x509_key_mem)          \
	X(gnutls_certificate_set_x509_trust_mem)        \
	X(gnutls_certificate_type_get)                  \
	X(gnutls_certificate_verification_status_print) \
	X(gnutls_certificate_verify_peers)              \
	X(gnutls_strerror)                              \
	X(gnutls_x509_crt_deinit)                       \
	X(gnutls_x509_crt_get_expiration_time)          \
	X(gnutls_x509_crt_import)                       \
	X(gnutls_x509_crt_init)                         \
	X(gnutls_x509_privkey_deinit)                   \
	X(gnutls_x509_privkey_import2)                  \
	X(gnutls_x509_privkey_init)                     \
	X(gnutls_free)
GF_DYNLIB_DEFINE(tls_lib, tls_fns, "libgnutls.so.30", "libgnutls30", TLS_FUNCS);
#define TLS(name) (GF_DYNLIB_FNS(&tls_lib, tls_fns)->name)
#define gnutls_certificate_allocate_credentials \
	TLS(gnutls_certificate_allocate_credentials)
#define gnutls_certificate_free_credentials \
	TLS(gnutls_certificate_free_credentials)
#define gnutls_certificate_set_x509_key_mem \
	TLS(gnutls_certificate_set_x509_key_mem)
#define gnutls_certificate_set_x509_trust_mem \
	TLS(gnutls_certificate_set_x509_trust_mem)
#define gnutls_certificate_type_get TLS(gnutls_certificate_type_get)
#define gnutls_certificate_verification_status_print \
	TLS(gnutls_certificate_verification_status_print)
#define gnutls_certificate_verify_peers TLS(gnutls_certificate_verify_peers)
#define gnutls_strerror			TLS(gnutls_strerror)
#define gnutls_x509_crt_deinit		TLS(gnutls_x509_crt_deinit)
#define gnutls_x509_crt_get_expiration_time \
	TLS(gnutls_x509_crt_get_expiration_time)
#define gnutls_x509_crt_import	    TLS(gnutls_x509_crt_import)
#define gnutls_x509_crt_init	    TLS(gnutls_x509_crt_init)
#define gnutls_x509_privkey_deinit  TLS(gnutls_x509_privkey_deinit)
#define gnutls_x509_privkey_import2 TLS(gnutls_x509_privkey_import2)
#define gnutls_x509_privkey_init    TLS(gnutls_x509_privkey_init)
#undef gnutls_free
#define gnutls_free(a) ((*TLS(gnutls_free))((void *)(a)), (a) = NULL)

void gf_tls_release(struct gf_tls *t)
{
	gf_free(t->cert_pem);
	gf_free(t->key_pem);
	gf_free(t->ca_pem);
}

static gnutls_datum_t datum(char *pem)
{
	gnutls_datum_t d = { (unsigned char *)pem, (unsigned)strlen(pem) };
	return d;
}

static int read_pem(const char *opt, const char *path, char **out,
		    struct gf_err *e)
{
	size_t len;
	struct gf_err fe;
	gf_err_clear(&fe);
	int rc = gf_file_read(path, GF_TLS_PEM_MAX, out, &len, &fe);
	if (rc)
		return gf_err_set(e, rc, "%s: %s", opt, fe.msg);
	if (strlen(*out) != len)
		return gf_err_set(e, GF_EPARSE,
				  "%s '%s': expected PEM text, found a NUL "
				  "byte",
				  opt, path);
	return 0;
}

/* The server's certificate (the first of the chain): parses, and is
 * valid now. */
static int check_cert(struct gf_tls *t, const char *path, struct gf_err *e)
{
	gnutls_x509_crt_t crt;
	gnutls_datum_t d = datum(t->cert_pem);
	gnutls_x509_crt_init(&crt);
	int g = gnutls_x509_crt_import(crt, &d, GNUTLS_X509_FMT_PEM);
	int rc = 0;
	if (g < 0) {
		rc = gf_err_set(e, GF_EPARSE,
				"--tls-cert '%s': not a PEM certificate (%s)",
				path, gnutls_strerror(g));
	} else {
		time_t until = gnutls_x509_crt_get_expiration_time(crt);
		if (until != (time_t)-1 && until < time(NULL)) {
			struct tm tm;
			char when[32];
			gmtime_r(&until, &tm);
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
			rc = gf_err_set(e, GF_EINVAL,
					"--tls-cert '%s': the certificate "
					"expired at %s",
					path, when);
		}
	}
	gnutls_x509_crt_deinit(crt);
	return rc;
}

static int check_key(struct gf_tls *t, const char *cert_file,
		     const char *key_file, struct gf_err *e)
{
	gnutls_x509_privkey_t key;
	gnutls_datum_t k = datum(t->key_pem), c = datum(t->cert_pem);
	gnutls_x509_privkey_init(&key);
	int g = gnutls_x509_privkey_import2(key, &k, GNUTLS_X509_FMT_PEM, NULL,
					    0);
	gnutls_x509_privkey_deinit(key);
	if (g < 0)
		return gf_err_set(e, GF_EPARSE,
				  "--tls-key '%s': not a PEM private key "
				  "without a password (%s)",
				  key_file, gnutls_strerror(g));
	gnutls_certificate_credentials_t cred;
	gnutls_certificate_allocate_credentials(&cred);
	g = gnutls_certificate_set_x509_key_mem(cred, &c, &k,
						GNUTLS_X509_FMT_PEM);
	gnutls_certificate_free_credentials(cred);
	if (g == GNUTLS_E_CERTIFICATE_KEY_MISMATCH)
		return gf_err_set(e, GF_EINVAL,
				  "--tls-key '%s' is not the key of the "
				  "certificate in --tls-cert '%s'",
				  key_file, cert_file);
	if (g < 0)
		return gf_err_set(e, GF_EPARSE,
				  "--tls-cert '%s' with --tls-key '%s': %s",
				  cert_file, key_file, gnutls_strerror(g));
	return 0;
}

static int check_ca(struct gf_tls *t, const char *path, struct gf_err *e)
{
	gnutls_certificate_credentials_t cred;
	gnutls_datum_t d = datum(t->ca_pem);
	gnutls_certificate_allocate_credentials(&cred);
	int g = gnutls_certificate_set_x509_trust_mem(cred, &d,
						      GNUTLS_X509_FMT_PEM);
	gnutls_certificate_free_credentials(cred);
	if (g <= 0)
		return gf_err_set(
			e, GF_EPARSE,
			"--client-ca '%s': no PEM certificate in it%s%s", path,
			g < 0 ? ": " : "", g < 0 ? gnutls_strerror(g) : "");
	return 0;
}

int gf_tls_load(struct gf_tls *t, const char *cert_file, const char *key_file,
		const char *client_ca_file, struct gf_err *e)
{
	memset(t, 0, sizeof(*t));
	int rc = gf_dynlib_open(&tls_lib, e);
	if (rc == 0)
		rc = read_pem("--tls-cert", cert_file, &t->cert_pem, e);
	if (rc == 0)
		rc = read_pem("--tls-key", key_file, &t->key_pem, e);
	if (rc == 0 && client_ca_file)
		rc = read_pem("--client-ca", client_ca_file, &t->ca_pem, e);
	if (rc == 0)
		rc = check_cert(t, cert_file, e);
	if (rc == 0)
		rc = check_key(t, cert_file, key_file, e);
	if (rc == 0 && t->ca_pem)
		rc = check_ca(t, client_ca_file, e);
	return rc;
}

int gf__tls_mhd_options(const struct gf_tls *t, struct MHD_OptionItem *o)
{
	int n = 0;
	if (t) {
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0,
						  t->cert_pem };
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0,
						  t->key_pem };
		if (t->ca_pem)
			o[n++] = (struct MHD_OptionItem){
				MHD_OPTION_HTTPS_MEM_TRUST, 0, t->ca_pem
			};
	}
	o[n] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	return n;
}

bool gf_req_client_cert_ok(const struct gf_http_req *r, char *why, size_t size)
{
	static char client_purpose[] = GNUTLS_KP_TLS_WWW_CLIENT;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		r->conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	gnutls_session_t ss = ci ? (gnutls_session_t)ci->tls_session : NULL;
	if (!ss) {
		if (why)
			gf_note(why, size, "the request came over plain http");
		return false;
	}
	unsigned status = 0;
	gnutls_typed_vdata_st purpose = {
		.type = GNUTLS_DT_KEY_PURPOSE_OID,
		.data = (unsigned char *)client_purpose,
	};
	int g = gnutls_certificate_type_get(ss) == GNUTLS_CRT_X509
			? gnutls_certificate_verify_peers(ss, &purpose, 1,
							  &status)
			: GNUTLS_E_NO_CERTIFICATE_FOUND;
	if (g == 0 && status == 0)
		return true;
	if (!why)
		return false;
	if (g == GNUTLS_E_NO_CERTIFICATE_FOUND) {
		gf_note(why, size, "no client certificate was presented");
	} else if (g < 0) {
		gf_note(why, size,
			"the client certificate cannot be "
			"verified: %s",
			gnutls_strerror(g));
	} else {
		gnutls_datum_t out = { NULL, 0 };
		if (gnutls_certificate_verification_status_print(
			    status, GNUTLS_CRT_X509, &out, 0) == 0 &&
		    out.data) {
			gf_note(why, size,
				"the client certificate does not "
				"verify: %s",
				(const char *)out.data);
			gnutls_free(out.data);
		} else {
			gf_note(why, size,
				"the client certificate does not "
				"verify");
		}
	}
	return false;
}
