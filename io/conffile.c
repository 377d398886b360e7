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

bool bt_prices_load_file(struct bt_prices *p, const char *path, bool regular, char *err,
                         size_t errlen)
{
    char *text = regular ? bt_read_regular_file(path, 4 << 20, NULL) : bt_read_file(path, 4 << 20, NULL);
    if (!text) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return false;
    }
    /* a bad row leaves the table as it was: the rows read so far are dropped */
    int n0 = p->n;
    bool ok = bt_prices_parse(p, text, path, err, errlen);
    if (!ok)
        p->n = n0;
    free(text);
    return ok;
}

/* data/prices.conf, then the Price List API's cache (its rows win); what could not
 * be read goes to prices_note, never an error that stops bedtop: the figures it
 * would price are unknown with that reason. */
void bt_prices_load_default(struct bt_config *c)
{
    if (c->prices_loaded)
        return;
    c->prices_loaded = true;
    char path[1200], err[256];
    if (!bt_data_path("prices.conf", path, sizeof path))
        snprintf(c->prices_note, sizeof c->prices_note, "price table prices.conf not found "
                 "(set BEDTOP_DATADIR or reinstall bedtop)");
    else if (!bt_prices_load_file(&c->prices, path, false, err, sizeof err))
        snprintf(c->prices_note, sizeof c->prices_note, "price table: %s", err);
    if (!bt_cache_file("prices.conf", false, path, sizeof path))
        return;
    if (!bt_prices_load_file(&c->prices, path, true, err, sizeof err) && errno != ENOENT &&
        !c->prices_note[0])
        snprintf(c->prices_note, sizeof c->prices_note, "Price List API cache ignored: %s", err);
}

/* The data file first, so that [burndown] lines of the config come later and win;
 * the price table likewise before [prices]. */
static void ensure_burndown(struct bt_config *c)
{
    bt_prices_load_default(c);
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
