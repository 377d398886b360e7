#include "io/conffile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "io/file.h"

bool bt_burndown_load_file(struct bt_burndown *b, const char *path, char *err, size_t errlen)
{
    char *text = bt_read_file(path, 1 << 20, NULL);
    if (!text) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return false;
    }
    bool ok = bt_burndown_parse(b, text, path, err, errlen);
    free(text);
    return ok;
}

bool bt_burndown_load_default(struct bt_burndown *b, char *err, size_t errlen)
{
    char path[1200];
    if (!bt_data_path("burndown.conf", path, sizeof path)) {
        /* name where it was looked for last: the installed data directory */
        const char *env = getenv("BEDTOP_DATADIR");
        snprintf(err, errlen,
                 "burndown table: %s/burndown.conf: cannot be read (%s); set BEDTOP_DATADIR to "
                 "the directory holding burndown.conf, or reinstall bedtop",
                 env && *env ? env : BEDTOP_DATADIR, strerror(errno ? errno : ENOENT));
        return false;
    }
    if (!bt_burndown_load_file(b, path, err, errlen))
        return false;
    if (!b->n) {
        snprintf(err, errlen, "burndown table: %s: no rules (expected model-pattern = factor "
                 "lines); restore the file or reinstall bedtop", path);
        return false;
    }
    return true;
}

/* The data file first, so that [burndown] lines of the config come later and win. */
static void ensure_burndown(struct bt_config *c)
{
    if (!c->burndown.n && !c->burndown_error[0]) {
        /* table missing: an error the caller reports, never every model at 1 */
        if (!bt_burndown_load_default(&c->burndown, c->burndown_error, sizeof c->burndown_error))
            bt_burndown_free(&c->burndown);
    }
}

void bt_config_init(struct bt_config *c)
{
    bt_config_defaults(c);
    ensure_burndown(c);
}

bool bt_config_load(struct bt_config *c, const char *path, char *err, size_t errlen)
{
    char def[1024];
    bool optional = false;
    if (!path) {
        /* $XDG_CONFIG_HOME if absolute, else HOME's (or the password database's) .config;
         * never the current directory, where anyone may have planted a .config/ whose
         * endpoint_url would receive every signed request */
        char base[900];
        if (!bt_xdg_dir("XDG_CONFIG_HOME", ".config", base, sizeof base)) {
            bt_err("no config read: neither XDG_CONFIG_HOME (an absolute path), HOME nor the "
                   "password database names a home directory; give --config FILE");
            bt_strlcpy(c->path, "", sizeof c->path);
            ensure_burndown(c);
            return true;
        }
        snprintf(def, sizeof def, "%s/bedtop/config", base);
        path = def;
        optional = true;
    }
    bt_strlcpy(c->path, path, sizeof c->path);
    ensure_burndown(c);
    char *text = bt_read_file(path, 4 << 20, NULL);
    if (!text) {
        if (optional && errno == ENOENT) {
            c->path[0] = '\0';
            return true;
        }
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return false;
    }
    bool ok = bt_config_parse_string(c, text, path, err, errlen);
    free(text);
    return ok;
}
