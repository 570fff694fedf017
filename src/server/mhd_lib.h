/*
 * mhd_lib.h - libmicrohttpd, opened when the first server starts
 * (util/dynlib.h): the server's files include this instead of
 * <microhttpd.h> and call it by its own names.  It brings GnuTLS with it
 * (tls.c opens that by name too, for the certificate checks).
 */
#ifndef GF_SERVER_MHD_LIB_H
#define GF_SERVER_MHD_LIB_H

#include <microhttpd.h>

#include "util/dynlib.h"

#define GF_MHD_FUNCS(X)                                           \
	X(MHD_add_response_header)                                \
	X(MHD_create_response_from_buffer)                        \
	X(MHD_create_response_from_buffer_with_free_callback_cls) \
	X(MHD_create_response_from_callback)                      \
	X(MHD_destroy_response)                                   \
	X(MHD_get_connection_info)                                \
	X(MHD_get_connection_values_n)                            \
	X(MHD_lookup_connection_value)                            \
	X(MHD_lookup_connection_value_n)                          \
	X(MHD_queue_response)                                     \
	X(MHD_quiesce_daemon)                                     \
	X(MHD_resume_connection)                                  \
	X(MHD_start_daemon)                                       \
	X(MHD_stop_daemon)                                        \
	X(MHD_suspend_connection)
GF_DYNLIB_STRUCT(gf_mhd_fns, GF_MHD_FUNCS);
extern struct gf_dynlib gf_mhd_lib;

#define GF__MHD(name)			(GF_DYNLIB_FNS(&gf_mhd_lib, gf_mhd_fns)->name)
#define MHD_add_response_header		GF__MHD(MHD_add_response_header)
#define MHD_create_response_from_buffer GF__MHD(MHD_create_response_from_buffer)
#define MHD_create_response_from_buffer_with_free_callback_cls \
	GF__MHD(MHD_create_response_from_buffer_with_free_callback_cls)
#define MHD_create_response_from_callback \
	GF__MHD(MHD_create_response_from_callback)
#define MHD_destroy_response	      GF__MHD(MHD_destroy_response)
#define MHD_get_connection_info	      GF__MHD(MHD_get_connection_info)
#define MHD_get_connection_values_n   GF__MHD(MHD_get_connection_values_n)
#define MHD_lookup_connection_value   GF__MHD(MHD_lookup_connection_value)
#define MHD_lookup_connection_value_n GF__MHD(MHD_lookup_connection_value_n)
#define MHD_queue_response	      GF__MHD(MHD_queue_response)
#define MHD_quiesce_daemon	      GF__MHD(MHD_quiesce_daemon)
#define MHD_resume_connection	      GF__MHD(MHD_resume_connection)
#define MHD_start_daemon	      GF__MHD(MHD_start_daemon)
#define MHD_stop_daemon		      GF__MHD(MHD_stop_daemon)
#define MHD_suspend_connection	      GF__MHD(MHD_suspend_connection)

#endif
