/* What kind of failure a message describes. The kind crosses rooms (net/ and aws/ set it
 * on an HTTP answer, collectors pass it up, app/ picks the remedy from it); the message is
 * built once, for people, and no later code reads it back to find out what went wrong. */
#ifndef BEDTOP_ERROR_H
#define BEDTOP_ERROR_H

enum bt_errkind {
    BT_ERR_NONE = 0,
    BT_ERR_CREDENTIALS,   /* no usable credentials, or the service refused them as such */
    BT_ERR_ACCESS,        /* credentials fine, permission denied */
    BT_ERR_REGION,        /* no Region, or none the endpoint can be built for */
    BT_ERR_NETWORK,       /* connect, DNS, TLS, timeout, reset: no answer */
    BT_ERR_THROTTLED,     /* the service asked to slow down */
    BT_ERR_PARSE,         /* an answer that could not be read */
    BT_ERR_SERVICE,       /* the service failed (5xx) */
    BT_ERR_REQUEST,       /* the request itself was refused or could not be built */
    BT_ERR_COUNT
};

/* "credentials", "access", ... for logs and JSON. */
const char *bt_errkind_name(enum bt_errkind k);
#endif
