/*
 * version.h -- Smriti's version, the one place it is written down.
 *
 * `smriti --version`, MCP's serverInfo.version and the man page read it
 * here; the Makefile reads it for the man page, and debian/rules refuses to
 * build a package whose debian/changelog names another upstream version.
 */
#ifndef SMRITI_VERSION_H
#define SMRITI_VERSION_H

#define SMRITI_VERSION "0.1.0"

#endif
