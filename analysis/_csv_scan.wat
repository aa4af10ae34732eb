;; Row framing of the msMemScope CSV reader, in WebAssembly because a
;; JavaScript byte loop tops out well below disk speed. `scan` walks bytes
;; [p, end) of its memory 16 at a time and writes one 64-byte record per
;; non-empty row at `out` (i32 slots):
;;   0 start, 1 end (a trailing \r left out), 2 line number of the row's
;;   first line, 3 separator count, 4..15 the first 12 separators (commas
;;   outside quotes).
;; It stops after `max` records or at a row the bytes do not finish (unless
;; `last`, when the rest is the final row); global `stop` is where the next
;; call starts and global `line` the line number there. The 15 bytes after
;; `end` are read (and ignored): keep them inside the memory. Regenerate the
;; module with `deno run -A analysis/_csv_scan_build.ts` after an edit.
;;
;; Per 16 bytes: masks of quotes, commas and newlines; a prefix XOR of the
;; quote mask marks the bytes inside quotes (as simdjson does), so only
;; commas outside quotes and newlines are visited, one bit at a time.
(module
  (memory (export "memory") 1)
  (global $stop (export "stop") (mut i32) (i32.const 0))
  (global $line (export "line") (mut i32) (i32.const 0))
  (func (export "scan")
    (param $p i32) (param $end i32) (param $last i32) (param $line i32)
    (param $out i32) (param $max i32) (result i32)
    (local $rows i32) (local $start i32) (local $inq i32) (local $nsep i32)
    (local $rec i32) (local $rowline i32) (local $e i32) (local $base i32)
    (local $v v128) (local $mq i32) (local $mc i32) (local $mn i32)
    (local $x i32) (local $inside i32) (local $m i32) (local $bit i32)
    (local $pos i32) (local $n i32)
    (local.set $start (local.get $p))
    (local.set $rowline (local.get $line))
    (local.set $rec (local.get $out))
    (local.set $base (local.get $p))
    (block $done
      (br_if $done (i32.eqz (local.get $max)))
      (block $eof
        (loop $block
          (br_if $eof (i32.ge_u (local.get $base) (local.get $end)))
          (local.set $v (v128.load align=1 (local.get $base)))
          (local.set $mq (i8x16.bitmask (i8x16.eq (local.get $v) (v128.const i8x16 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22 0x22))))
          (local.set $mc (i8x16.bitmask (i8x16.eq (local.get $v) (v128.const i8x16 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c 0x2c))))
          (local.set $mn (i8x16.bitmask (i8x16.eq (local.get $v) (v128.const i8x16 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a 0x0a))))
          (local.set $n (i32.sub (local.get $end) (local.get $base)))
          (if (i32.lt_u (local.get $n) (i32.const 16))
            (then
              (local.set $x (i32.sub (i32.shl (i32.const 1) (local.get $n)) (i32.const 1)))
              (local.set $mq (i32.and (local.get $mq) (local.get $x)))
              (local.set $mc (i32.and (local.get $mc) (local.get $x)))
              (local.set $mn (i32.and (local.get $mn) (local.get $x)))))
          ;; bit i of x: odd number of quotes at or before byte i
          (local.set $x (local.get $mq))
          (local.set $x (i32.xor (local.get $x) (i32.shl (local.get $x) (i32.const 1))))
          (local.set $x (i32.xor (local.get $x) (i32.shl (local.get $x) (i32.const 2))))
          (local.set $x (i32.xor (local.get $x) (i32.shl (local.get $x) (i32.const 4))))
          (local.set $x (i32.xor (local.get $x) (i32.shl (local.get $x) (i32.const 8))))
          (local.set $inside
            (i32.xor (local.get $x) (i32.sub (i32.const 0) (local.get $inq))))
          (local.set $inq
            (i32.xor (local.get $inq) (i32.and (i32.popcnt (local.get $mq)) (i32.const 1))))
          (local.set $m
            (i32.or
              (i32.and (local.get $mc) (i32.xor (local.get $inside) (i32.const -1)))
              (local.get $mn)))
          (block $bits_done
            (loop $bits
              (br_if $bits_done (i32.eqz (local.get $m)))
              (local.set $bit (i32.and (local.get $m) (i32.sub (i32.const 0) (local.get $m))))
              (local.set $pos (i32.add (local.get $base) (i32.ctz (local.get $m))))
              (local.set $m (i32.xor (local.get $m) (local.get $bit)))
              (if (i32.and (local.get $mc) (local.get $bit))
                (then
                  (if (i32.lt_u (local.get $nsep) (i32.const 12))
                    (then
                      (i32.store offset=16
                        (i32.add (local.get $rec) (i32.shl (local.get $nsep) (i32.const 2)))
                        (local.get $pos))
                      (local.set $nsep (i32.add (local.get $nsep) (i32.const 1)))))
                  (br $bits)))
              (local.set $line (i32.add (local.get $line) (i32.const 1)))
              ;; a newline inside quotes belongs to the row
              (br_if $bits (i32.and (local.get $inside) (local.get $bit)))
              (local.set $e (local.get $pos))
              (if (i32.gt_u (local.get $e) (local.get $start))
                (then
                  (if (i32.eq (i32.load8_u (i32.sub (local.get $e) (i32.const 1))) (i32.const 0x0d))
                    (then (local.set $e (i32.sub (local.get $e) (i32.const 1)))))))
              (if (i32.gt_u (local.get $e) (local.get $start))
                (then
                  (i32.store offset=0 (local.get $rec) (local.get $start))
                  (i32.store offset=4 (local.get $rec) (local.get $e))
                  (i32.store offset=8 (local.get $rec) (local.get $rowline))
                  (i32.store offset=12 (local.get $rec) (local.get $nsep))
                  (local.set $rec (i32.add (local.get $rec) (i32.const 64)))
                  (local.set $rows (i32.add (local.get $rows) (i32.const 1)))))
              (local.set $start (i32.add (local.get $pos) (i32.const 1)))
              (local.set $rowline (local.get $line))
              (local.set $nsep (i32.const 0))
              (br_if $done (i32.ge_u (local.get $rows) (local.get $max)))
              (br $bits)))
          (local.set $base (i32.add (local.get $base) (i32.const 16)))
          (br $block)))
      ;; The input ended inside a row: it is the last row, or it waits for
      ;; more bytes (its lines are counted again then).
      (if (i32.eqz (local.get $last))
        (then
          (local.set $line (local.get $rowline))
          (br $done)))
      (local.set $e (local.get $end))
      (if (i32.gt_u (local.get $e) (local.get $start))
        (then
          (if (i32.eq (i32.load8_u (i32.sub (local.get $e) (i32.const 1))) (i32.const 0x0d))
            (then (local.set $e (i32.sub (local.get $e) (i32.const 1)))))))
      (if (i32.gt_u (local.get $e) (local.get $start))
        (then
          (i32.store offset=0 (local.get $rec) (local.get $start))
          (i32.store offset=4 (local.get $rec) (local.get $e))
          (i32.store offset=8 (local.get $rec) (local.get $rowline))
          (i32.store offset=12 (local.get $rec) (local.get $nsep))
          (local.set $rows (i32.add (local.get $rows) (i32.const 1)))))
      (local.set $start (local.get $end)))
    (global.set $stop (local.get $start))
    (global.set $line (local.get $line))
    (local.get $rows)))
