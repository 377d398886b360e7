/* The one URL parser: every URL bedtop sends (AWS endpoints, --endpoint-url, --admission,
 * --source, a container's credentials URI) is read by curl's own curl_url(), so what is
 * checked, logged and redacted is what curl will send. Its shown form goes through the one
 * redactor, bt_url_redact (core/util.h), which finds the user part as curl does. */
#ifndef BEDTOP_URL_H
#define BEDTOP_URL_H
#include <stdbool.h>
#include <stddef.h>

struct bt_url {
    char *url;    /* curl's normal form ("http:///u:p@h" -> "http://u:p@h/"), #fragment dropped */
    char *scheme; /* "http" or "https" (lower case) */
    char *host;   /* as curl will connect to it (IPv6 without brackets' contents changed) */
    char *port;   /* explicit port, NULL if none */
    char *path;   /* raw, at least "/" */
    char *query;  /* raw, without '?', NULL if none */
    char *shown;  /* for messages, --verbose and recordings: user:***@, query values *** */
};

/* Parses in (http or https only); false with a reason in err (never the URL's secrets). */
bool bt_url_parse(const char *in, struct bt_url *u, char *err, size_t errlen);
void bt_url_free(struct bt_url *u);
#endif
