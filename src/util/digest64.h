/*
 * digest64.h -- the 64-bit id of a piece of bytes: the first eight bytes
 * of its SHA-256, big-endian, as a signed integer (a database's INTEGER).
 * What names an item and a chunk of a checkpoint's lists in a store
 * (store/content.h), and so what the kept texts of items remember of each
 * (domain/item_texts.h).
 */
#ifndef SMRITI_DIGEST64_H
#define SMRITI_DIGEST64_H

#include <stddef.h>
#include <stdint.h>

int64_t digest64(const void *p, size_t n);

#endif
