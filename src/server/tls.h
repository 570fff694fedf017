/*
 * tls.h - HTTPS for the server (server.h) on libmicrohttpd's GnuTLS
 * support, and the client-certificate check a service applies to the
 * routes only a certificate may call (the Kubernetes extender's).
 *
 *   struct gf_tls t;
 *   if (gf_tls_load(&t, "serve.crt", "serve.key", "clients-ca.crt", &e))
 *           fail("%s", e.msg);  // "--tls-key 'serve.key': ..."
 *   struct gf_server_opts o = { ..., .tls = &t };
 *   ... gf_server_start(), gf_server_stop() ...
 *   gf_tls_release(&t);
 *
 * With a client CA the server asks every client for a certificate
 * (GnuTLS's "request", not "require": people and agents present none
 * and authenticate with their bearer token); a handler asks
 * gf_req_client_cert_ok() whether this connection's client presented
 * one that the CA signed and that is valid now.
 */
#ifndef GF_SERVER_TLS_H
#define GF_SERVER_TLS_H

#include <stdbool.h>
#include <stddef.h>

#include <gpufleet/err.h>

#include "server/router.h"

#define GF_TLS_PEM_MAX (1u << 20) /* a certificate chain, a key, a CA */

struct gf_tls {
	char *cert_pem; /* the server's chain, PEM (leaf first) */
	char *key_pem;	/* its private key, PEM */
	char *ca_pem;	/* CA(s) for client certificates; NULL: none asked */
};

/*
 * Read and check the PEM files: the certificate and the key must parse
 * and match; the client CA, when given (may be NULL), must hold at least
 * one certificate.  0, or a negative code with e naming the option and
 * the file (--tls-cert, --tls-key, --client-ca) and the cause.  t is
 * released by the caller with gf_tls_release() either way.
 */
int gf_tls_load(struct gf_tls *t, const char *cert_file, const char *key_file,
		const char *client_ca_file, struct gf_err *e) GF_MUST_CHECK;
void gf_tls_release(struct gf_tls *t);

/*
 * True when the request came over TLS and its client presented a
 * certificate that verifies against the server's client CA (signature
 * chain, validity dates, a key purpose that allows TLS clients).  False
 * on plain HTTP, on a server without a client CA, without a
 * certificate, or with one that does not verify, with why (may be NULL)
 * saying which.  Inside a handler; any thread.
 */
bool gf_req_client_cert_ok(const struct gf_http_req *r, char *why, size_t size);

#endif
