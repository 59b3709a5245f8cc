# Copyright (c) 2026 The autotune authors.
# Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
# in compliance with the License. You may obtain a copy at http://www.apache.org/licenses/LICENSE-2.0
#
# Rendered by `autotune lint --fix` from autotuner/templates/atk_support.py.j2; do not edit by hand.
"""What the NPU folder of split_2d_jagged needs besides torch and triton, so it runs copied alone:
ATK's API classes (or stand-ins where ATK is not installed), the cases' constants, the cases and their inputs."""

from __future__ import annotations

import json
import sys

import torch

try:
    from atk.configs.dataset_config import InputDataset
    from atk.tasks.api_execute import register
    from atk.tasks.api_execute.base_api import BaseApi

    ATK_AVAILABLE = True
except ImportError:
    ATK_AVAILABLE = False

    class InputDataset:  # type: ignore[no-redef]
        """What ATK hands an API: positional tensors in `args`, the rest in `kwargs`."""

        def __init__(self, args: list, kwargs: dict | None = None) -> None:
            self.args = args
            self.kwargs = kwargs or {}

    class BaseApi:  # type: ignore[no-redef]
        def __init__(self, dataset: InputDataset | None = None) -> None:
            self.dataset = dataset

    def register(name: str):  # type: ignore[no-redef]
        def keep(cls):
            cls.atk_name = name
            return cls

        return keep


OP = "split_2d_jagged"
#: kind -> the op's cases: name, shape, dtype and the deterministic jagged lengths (one string).
CASES = {
    "accuracy": [
        {
            "name": "b1_n8_d16_p0_fp32",
            "shape": {"B": 1, "max_seq_len": 8, "D": 16, "prefix": 0},
            "dtype": "float32",
            "lengths": "1",
        },
        {
            "name": "b1_n8_d16_p0_fp16",
            "shape": {"B": 1, "max_seq_len": 8, "D": 16, "prefix": 0},
            "dtype": "float16",
            "lengths": "1",
        },
        {
            "name": "b1_n8_d16_p0_bf16",
            "shape": {"B": 1, "max_seq_len": 8, "D": 16, "prefix": 0},
            "dtype": "bfloat16",
            "lengths": "1",
        },
        {
            "name": "b5_n12_d40_p0_fp32",
            "shape": {"B": 5, "max_seq_len": 12, "D": 40, "prefix": 0},
            "dtype": "float32",
            "lengths": "0 7 3 12 5",
        },
        {
            "name": "b5_n12_d40_p0_fp16",
            "shape": {"B": 5, "max_seq_len": 12, "D": 40, "prefix": 0},
            "dtype": "float16",
            "lengths": "0 7 3 12 5",
        },
        {
            "name": "b5_n12_d40_p0_bf16",
            "shape": {"B": 5, "max_seq_len": 12, "D": 40, "prefix": 0},
            "dtype": "bfloat16",
            "lengths": "0 7 3 12 5",
        },
        {
            "name": "b6_n20_d7_p2_fp32",
            "shape": {"B": 6, "max_seq_len": 20, "D": 7, "prefix": 2},
            "dtype": "float32",
            "lengths": "12 5 20 1 17 2",
        },
        {
            "name": "b6_n20_d7_p2_fp16",
            "shape": {"B": 6, "max_seq_len": 20, "D": 7, "prefix": 2},
            "dtype": "float16",
            "lengths": "12 5 20 1 17 2",
        },
        {
            "name": "b6_n20_d7_p2_bf16",
            "shape": {"B": 6, "max_seq_len": 20, "D": 7, "prefix": 2},
            "dtype": "bfloat16",
            "lengths": "12 5 20 1 17 2",
        },
        {
            "name": "b2_n4_d16_p0_fp32",
            "shape": {"B": 2, "max_seq_len": 4, "D": 16, "prefix": 0},
            "dtype": "float32",
            "lengths": "0 0",
        },
        {
            "name": "b2_n4_d16_p0_fp16",
            "shape": {"B": 2, "max_seq_len": 4, "D": 16, "prefix": 0},
            "dtype": "float16",
            "lengths": "0 0",
        },
        {
            "name": "b2_n4_d16_p0_bf16",
            "shape": {"B": 2, "max_seq_len": 4, "D": 16, "prefix": 0},
            "dtype": "bfloat16",
            "lengths": "0 0",
        },
        {
            "name": "b3_n5_d1_p1_fp32",
            "shape": {"B": 3, "max_seq_len": 5, "D": 1, "prefix": 1},
            "dtype": "float32",
            "lengths": "3 4 1",
        },
        {
            "name": "b3_n5_d1_p1_fp16",
            "shape": {"B": 3, "max_seq_len": 5, "D": 1, "prefix": 1},
            "dtype": "float16",
            "lengths": "3 4 1",
        },
        {
            "name": "b3_n5_d1_p1_bf16",
            "shape": {"B": 3, "max_seq_len": 5, "D": 1, "prefix": 1},
            "dtype": "bfloat16",
            "lengths": "3 4 1",
        },
        {
            "name": "b1_n70_d48_p0_fp32",
            "shape": {"B": 1, "max_seq_len": 70, "D": 48, "prefix": 0},
            "dtype": "float32",
            "lengths": "70",
        },
        {
            "name": "b1_n70_d48_p0_fp16",
            "shape": {"B": 1, "max_seq_len": 70, "D": 48, "prefix": 0},
            "dtype": "float16",
            "lengths": "70",
        },
        {
            "name": "b1_n70_d48_p0_bf16",
            "shape": {"B": 1, "max_seq_len": 70, "D": 48, "prefix": 0},
            "dtype": "bfloat16",
            "lengths": "70",
        },
        {
            "name": "b1_n2_d9000_p0_fp32",
            "shape": {"B": 1, "max_seq_len": 2, "D": 9000, "prefix": 0},
            "dtype": "float32",
            "lengths": "2",
        },
        {
            "name": "b1_n2_d9000_p0_fp16",
            "shape": {"B": 1, "max_seq_len": 2, "D": 9000, "prefix": 0},
            "dtype": "float16",
            "lengths": "2",
        },
        {
            "name": "b1_n2_d9000_p0_bf16",
            "shape": {"B": 1, "max_seq_len": 2, "D": 9000, "prefix": 0},
            "dtype": "bfloat16",
            "lengths": "2",
        },
    ],
    "performance": [
        {
            "name": "b256_n2048_d512_p0_bf16",
            "shape": {"B": 256, "max_seq_len": 2048, "D": 512, "prefix": 0},
            "dtype": "bfloat16",
            "lengths": "782 114 1493 456 16 1027 217 1826 647 66 1305 355 2 871 149 1616 525 31 1129 266 1961 729 94 1420 416 9 966 190 1744 599 51 1236 319 0 815 127 1540 482 21 1065 235 1877 678 76 1348 377 4 907 164 1665 553 38 1169 286 2014 761 106 1465 440 13 1003 207 1794 628 60 1278 341 1 850 140 1587 508 27 1104 254 1929 709 87 1392 401 7 943 180 1714 581 46 1210 306 0 795 119 1511 466 18 1041 224 1845 659 70 1321 363 3 885 155 1635 536 34 1144 273 1981 741 98 1437 425 11 980 196 1763 610 55 1252 327 0 828 132 1558 492 24 1080 242 1897 690 80 1365 386 5 921 170 1683 563 41 1185 293 2035 774 111 1483 450 15 1018 213 1814 640 64 1295 349 2 863 146 1605 519 30 1120 261 1949 721 91 1409 410 8 957 186 1732 592 49 1226 314 0 807 124 1529 476 20 1056 231 1865 670 74 1338 372 4 898 161 1653 546 37 1160 281 2002 754 103 1454 435 12 994 203 1782 621 58 1268 336 1 842 137 1576 502 26 1095 250 1916 702 84 1382 395 6 935 176 1702 574 44 1201 301 0 787 115 1500 460 17 1032 220 1833 651 68 1311 358 2 877 151 1623 529 32 1135 269 1969 734 96",
        },
        {
            "name": "b512_n1024_d256_p16_fp16",
            "shape": {"B": 512, "max_seq_len": 1024, "D": 256, "prefix": 16},
            "dtype": "float16",
            "lengths": "391 57 746 228 8 513 108 913 323 33 652 177 1 435 74 808 262 15 564 133 980 364 47 710 208 4 483 95 872 299 25 618 159 0 407 63 770 241 10 532 117 938 339 38 674 188 2 453 82 832 276 19 584 143 1007 380 53 732 220 6 501 103 897 314 30 639 170 0 425 70 793 254 13 552 127 964 354 43 696 200 3 471 90 857 290 23 605 153 0 397 59 755 233 9 520 112 922 329 35 660 181 1 442 77 817 268 17 572 136 990 370 49 718 212 5 490 98 881 305 27 626 163 0 414 66 779 246 12 540 121 948 345 40 682 193 2 460 85 841 281 20 592 146 1017 387 55 741 225 7 509 106 907 320 32 647 174 1 431 73 802 259 15 560 130 974 360 45 704 205 4 478 93 866 296 24 613 157 0 403 62 764 238 10 528 115 932 335 37 669 186 2 449 80 826 273 18 580 140 1001 377 51 727 217 6 497 101 891 310 29 634 168 0 421 68 788 251 13 547 125 958 351 42 691 197 3 467 88 851 287 22 600 150 0 393 57 750 230 8 516 110 916 325 34 655 179 1 438 75 811 264 16 567 134 984 367 48 713 209 5 485 96 875 301 26 621 161 0 410 64 773 243 11 535 119 942 341 39 677 190 2 456 83 836 278 19 587 144 1011 383 54 736 222 7 504 104 901 316 31 642 172 0 427 71 797 256 14 555 128 968 357 44 699 202 4 474 91 860 292 23 608 154 0 399 60 759 235 9 523 113 926 331 35 664 183 1 445 78 821 270 17 575 138 994 373 50 722 214 5 492 99 885 307 28 629 165 0 416 67 782 248 12 543 122 952 347 41 685 195 3 463 86 845 284 21 595 148 1021 389 56 744 227 8 511 108 910 322 32 650 176 1 434 74 806 261 15 562 132 978 363 46 708 207 4 481 94 870 298 25 616 158 0 406 62 768 239 10 531 117 936 337 37 672 187 2 452 81 830 275 19 583 142 1005 379 52 730 219 6 500 102 895 313 29 637 169 0 423 69 791 253 13 550 126 962 353 43 694 199 3 470 89 854 289 22 603 152 0 396 58 753 231 9 519 111 920 328 34 658 180 1 441 77 815 266 16 570 136 988 369 48 716 211 5 488 97 879 303 27 624 162 0 412 65 777 244 11 538 120 946 343 39 680 192",
        },
        {
            "name": "b1024_n2048_d256_p0_fp32",
            "shape": {"B": 1024, "max_seq_len": 2048, "D": 256, "prefix": 0},
            "dtype": "float32",
            "lengths": "782 114 1493 456 16 1027 217 1826 647 66 1305 355 2 871 149 1616 525 31 1129 266 1961 729 94 1420 416 9 966 190 1744 599 51 1236 319 0 815 127 1540 482 21 1065 235 1877 678 76 1348 377 4 907 164 1665 553 38 1169 286 2014 761 106 1465 440 13 1003 207 1794 628 60 1278 341 1 850 140 1587 508 27 1104 254 1929 709 87 1392 401 7 943 180 1714 581 46 1210 306 0 795 119 1511 466 18 1041 224 1845 659 70 1321 363 3 885 155 1635 536 34 1144 273 1981 741 98 1437 425 11 980 196 1763 610 55 1252 327 0 828 132 1558 492 24 1080 242 1897 690 80 1365 386 5 921 170 1683 563 41 1185 293 2035 774 111 1483 450 15 1018 213 1814 640 64 1295 349 2 863 146 1605 519 30 1120 261 1949 721 91 1409 410 8 957 186 1732 592 49 1226 314 0 807 124 1529 476 20 1056 231 1865 670 74 1338 372 4 898 161 1653 546 37 1160 281 2002 754 103 1454 435 12 994 203 1782 621 58 1268 336 1 842 137 1576 502 26 1095 250 1916 702 84 1382 395 6 935 176 1702 574 44 1201 301 0 787 115 1500 460 17 1032 220 1833 651 68 1311 358 2 877 151 1623 529 32 1135 269 1969 734 96 1427 419 10 971 192 1751 603 53 1242 322 0 820 129 1547 486 22 1071 238 1884 682 78 1355 381 5 912 167 1672 557 39 1175 289 2022 766 108 1472 444 14 1009 209 1802 633 62 1285 344 1 855 143 1594 512 28 1110 257 1936 714 89 1399 404 8 948 182 1721 585 47 1217 309 0 799 120 1518 470 19 1047 227 1853 663 71 1328 367 3 890 157 1642 540 35 1150 276 1989 746 100 1444 429 11 985 199 1771 614 56 1258 331 0 833 134 1565 496 24 1086 245 1904 694 82 1371 390 6 926 172 1690 568 42 1191 296 2043 779 112 1489 454 16 1023 216 1821 644 65 1301 353 2 868 148 1612 523 31 1125 264 1956 726 93 1416 414 9 963 188 1740 596 51 1232 317 0 812 125 1536 479 21 1062 234 1872 675 75 1344 375 4 904 163 1660 550 38 1166 284 2010 758 105 1461 438 13 1000 205 1790 626 59 1275 339 1 847 139 1583 506 27 1101 252 1924 706 86 1388 399 7 940 178 1709 578 45 1207 304 0 792 117 1507 463 18 1038 223 1840 656 69 1317 361 3 882 154 1630 533 33 1141 272 1977 738 97 1433 423 10 977 195 1759 607 54 1248 325 0 825 131 1554 489 23 1077 241 1892 687 79 1361 384 5 917 169 1679 561 41 1181 292 2030 771 110 1479 448 15 1014 212 1809 637 63 1291 347 1 860 145 1601 516 29 1116 260 1944 718 90 1405 408 8 954 185 1728 589 49 1223 312 0 804 122 1525 473 20 1053 229 1860 668 73 1334 370 3 895 159 1649 544 36 1156 279 1997 751 102 1450 432 12 991 201 1778 619 57 1265 334 0 839 136 1572 500 25 1092 248 1912 699 83 1378 393 6 931 175 1698 572 44 1197 299 0 784 114 1496 457 16 1029 218 1828 649 67 1307 356 2 873 150 1619 527 32 1131 267 1964 731 95 1422 417 9 968 191 1747 601 52 1239 320 0 817 127 1542 483 22 1067 236 1880 679 77 1351 379 4 909 165 1667 554 39 1172 287 2017 763 107 1468 442 14 1005 208 1797 630 61 1281 342 1 852 141 1590 510 28 1107 255 1932 711 88 1395 402 7 945 181 1716 583 47 1213 307 0 796 119 1514 467 18 1043 225 1848 660 70 1324 365 3 887 156 1637 537 34 1147 274 1984 743 99 1440 426 11 982 197 1766 612 55 1255 329 0 830 133 1560 493 24 1082 243 1899 691 81 1367 388 5 923 171 1686 565 42 1187 295 2038 776 111 1485 451 15 1020 214 1816 642 64 1297 351 2 865 147 1608 520 30 1122 262 1952 723 92 1412 411 9 959 187 1735 594 50 1229 315 0 809 124 1531 477 20 1058 232 1868 672 74 1340 373 4 900 162 1656 548 37 1162 282 2005 755 104 1457 436 12 996 204 1785 623 59 1271 337 1 844 138 1578 503 26 1097 251 1919 703 85 1384 397 6 937 177 1705 576 45 1203 302 0 788 116 1503 461 17 1034 221 1836 653 68 1314 359 2 878 152 1626 531 33 1137 270 1972 735 96 1429 421 10 973 193 1754 605 53 1245 324 0 822 129 1549 487 23 1073 239 1887 684 78 1357 382 5 914 167 1674 558 40 1178 290 2025 768 108 1474 445 14 1011 210 1804 634 62 1287 345 1 857 143 1597 514 29 1112 258 1939 715 89 1401 406 8 951 183 1724 587 48 1219 310 0 801 121 1520 471 19 1049 228 1855 665 72 1330 368 3 892 158 1644 541 35 1152 277 1992 748 101 1446 430 12 988 200 1773 616 56 1261 332 0 835 135 1567 497 25 1088 246 1907 696 82 1374 391 6 928 173 1693 569 43 1193 298 2046 781 113 1492 455 16 1025 217 1824 646 66 1303 354 2 870 149 1615 524 31 1128 265 1959 728 94 1418 415 9 965 189 1742 598 51 1235 319 0 814 126 1538",
        },
        {
            "name": "b128_n4096_d1024_p0_bf16",
            "shape": {"B": 128, "max_seq_len": 4096, "D": 1024, "prefix": 0},
            "dtype": "bfloat16",
            "lengths": "1564 228 2987 913 33 2054 435 3652 1295 133 2610 710 4 1743 299 3233 1051 63 2259 532 3923 1458 188 2840 832 19 1932 380 3489 1198 103 2473 639 0 1631 254 3080 964 43 2131 471 3754 1356 153 2697 755 9 1814 329 3330 1106 77 2339 572 4029 1523 212 2931 881 27 2007 414 3589 1257 121 2557 682 2 1700 281 3174 1017 55 2209 509 3858 1419 174 2785 802 15 1887 360 3428 1163 93 2421 613 0 1590 238 3023 932 37 2083 449 3691 1318 140 2643 727 6 1770 310 3270 1072 68 2289 547 3963 1483 197 2875 851 22 1961 393 3527 1221 110 2505 655 1 1657 264 3116 984 48",
        },
    ],
}
#: Input names in the API's argument order.
INPUT_NAMES = [
    "values",
    "offsets_a",
    "offsets_b",
    "d_values_a",
    "d_values_b",
    "max_seq_len",
    "prefix",
    "rows_a",
    "rows_b",
]
#: Accuracy case -> one recipe per input: ("randn", shape, dtype) for seeded values, ("tensor",
#: values, shape, dtype) for exact integer data (offsets, lengths; one string), ("value", v) for
#: a scalar.
INPUTS = {
    "b1_n8_d16_p0_fp32": [
        ("randn", [1, 16], "float32"),
        ("tensor", "0 1", [2], "int64"),
        ("tensor", "0 0", [2], "int64"),
        ("randn", [1, 16], "float32"),
        ("randn", [0, 16], "float32"),
        ("value", 8),
        ("value", 0),
        ("value", 1),
        ("value", 0),
    ],
    "b1_n8_d16_p0_fp16": [
        ("randn", [1, 16], "float16"),
        ("tensor", "0 1", [2], "int64"),
        ("tensor", "0 0", [2], "int64"),
        ("randn", [1, 16], "float16"),
        ("randn", [0, 16], "float16"),
        ("value", 8),
        ("value", 0),
        ("value", 1),
        ("value", 0),
    ],
    "b1_n8_d16_p0_bf16": [
        ("randn", [1, 16], "bfloat16"),
        ("tensor", "0 1", [2], "int64"),
        ("tensor", "0 0", [2], "int64"),
        ("randn", [1, 16], "bfloat16"),
        ("randn", [0, 16], "bfloat16"),
        ("value", 8),
        ("value", 0),
        ("value", 1),
        ("value", 0),
    ],
    "b5_n12_d40_p0_fp32": [
        ("randn", [27, 40], "float32"),
        ("tensor", "0 0 2 5 11 11", [6], "int64"),
        ("tensor", "0 0 5 5 11 16", [6], "int64"),
        ("randn", [11, 40], "float32"),
        ("randn", [16, 40], "float32"),
        ("value", 12),
        ("value", 0),
        ("value", 11),
        ("value", 16),
    ],
    "b5_n12_d40_p0_fp16": [
        ("randn", [27, 40], "float16"),
        ("tensor", "0 0 2 5 11 11", [6], "int64"),
        ("tensor", "0 0 5 5 11 16", [6], "int64"),
        ("randn", [11, 40], "float16"),
        ("randn", [16, 40], "float16"),
        ("value", 12),
        ("value", 0),
        ("value", 11),
        ("value", 16),
    ],
    "b5_n12_d40_p0_bf16": [
        ("randn", [27, 40], "bfloat16"),
        ("tensor", "0 0 2 5 11 11", [6], "int64"),
        ("tensor", "0 0 5 5 11 16", [6], "int64"),
        ("randn", [11, 40], "bfloat16"),
        ("randn", [16, 40], "bfloat16"),
        ("value", 12),
        ("value", 0),
        ("value", 11),
        ("value", 16),
    ],
    "b6_n20_d7_p2_fp32": [
        ("randn", [57, 7], "float32"),
        ("tensor", "0 6 7 22 22 23 23", [7], "int64"),
        ("tensor", "0 6 10 15 16 32 34", [7], "int64"),
        ("randn", [23, 7], "float32"),
        ("randn", [34, 7], "float32"),
        ("value", 20),
        ("value", 2),
        ("value", 23),
        ("value", 34),
    ],
    "b6_n20_d7_p2_fp16": [
        ("randn", [57, 7], "float16"),
        ("tensor", "0 6 7 22 22 23 23", [7], "int64"),
        ("tensor", "0 6 10 15 16 32 34", [7], "int64"),
        ("randn", [23, 7], "float16"),
        ("randn", [34, 7], "float16"),
        ("value", 20),
        ("value", 2),
        ("value", 23),
        ("value", 34),
    ],
    "b6_n20_d7_p2_bf16": [
        ("randn", [57, 7], "bfloat16"),
        ("tensor", "0 6 7 22 22 23 23", [7], "int64"),
        ("tensor", "0 6 10 15 16 32 34", [7], "int64"),
        ("randn", [23, 7], "bfloat16"),
        ("randn", [34, 7], "bfloat16"),
        ("value", 20),
        ("value", 2),
        ("value", 23),
        ("value", 34),
    ],
    "b2_n4_d16_p0_fp32": [
        ("randn", [0, 16], "float32"),
        ("tensor", "0 0 0", [3], "int64"),
        ("tensor", "0 0 0", [3], "int64"),
        ("randn", [0, 16], "float32"),
        ("randn", [0, 16], "float32"),
        ("value", 4),
        ("value", 0),
        ("value", 0),
        ("value", 0),
    ],
    "b2_n4_d16_p0_fp16": [
        ("randn", [0, 16], "float16"),
        ("tensor", "0 0 0", [3], "int64"),
        ("tensor", "0 0 0", [3], "int64"),
        ("randn", [0, 16], "float16"),
        ("randn", [0, 16], "float16"),
        ("value", 4),
        ("value", 0),
        ("value", 0),
        ("value", 0),
    ],
    "b2_n4_d16_p0_bf16": [
        ("randn", [0, 16], "bfloat16"),
        ("tensor", "0 0 0", [3], "int64"),
        ("tensor", "0 0 0", [3], "int64"),
        ("randn", [0, 16], "bfloat16"),
        ("randn", [0, 16], "bfloat16"),
        ("value", 4),
        ("value", 0),
        ("value", 0),
        ("value", 0),
    ],
    "b3_n5_d1_p1_fp32": [
        ("randn", [8, 1], "float32"),
        ("tensor", "0 1 2 2", [4], "int64"),
        ("tensor", "0 2 5 6", [4], "int64"),
        ("randn", [2, 1], "float32"),
        ("randn", [6, 1], "float32"),
        ("value", 5),
        ("value", 1),
        ("value", 2),
        ("value", 6),
    ],
    "b3_n5_d1_p1_fp16": [
        ("randn", [8, 1], "float16"),
        ("tensor", "0 1 2 2", [4], "int64"),
        ("tensor", "0 2 5 6", [4], "int64"),
        ("randn", [2, 1], "float16"),
        ("randn", [6, 1], "float16"),
        ("value", 5),
        ("value", 1),
        ("value", 2),
        ("value", 6),
    ],
    "b3_n5_d1_p1_bf16": [
        ("randn", [8, 1], "bfloat16"),
        ("tensor", "0 1 2 2", [4], "int64"),
        ("tensor", "0 2 5 6", [4], "int64"),
        ("randn", [2, 1], "bfloat16"),
        ("randn", [6, 1], "bfloat16"),
        ("value", 5),
        ("value", 1),
        ("value", 2),
        ("value", 6),
    ],
    "b1_n70_d48_p0_fp32": [
        ("randn", [70, 48], "float32"),
        ("tensor", "0 43", [2], "int64"),
        ("tensor", "0 27", [2], "int64"),
        ("randn", [43, 48], "float32"),
        ("randn", [27, 48], "float32"),
        ("value", 70),
        ("value", 0),
        ("value", 43),
        ("value", 27),
    ],
    "b1_n70_d48_p0_fp16": [
        ("randn", [70, 48], "float16"),
        ("tensor", "0 43", [2], "int64"),
        ("tensor", "0 27", [2], "int64"),
        ("randn", [43, 48], "float16"),
        ("randn", [27, 48], "float16"),
        ("value", 70),
        ("value", 0),
        ("value", 43),
        ("value", 27),
    ],
    "b1_n70_d48_p0_bf16": [
        ("randn", [70, 48], "bfloat16"),
        ("tensor", "0 43", [2], "int64"),
        ("tensor", "0 27", [2], "int64"),
        ("randn", [43, 48], "bfloat16"),
        ("randn", [27, 48], "bfloat16"),
        ("value", 70),
        ("value", 0),
        ("value", 43),
        ("value", 27),
    ],
    "b1_n2_d9000_p0_fp32": [
        ("randn", [2, 9000], "float32"),
        ("tensor", "0 1", [2], "int64"),
        ("tensor", "0 1", [2], "int64"),
        ("randn", [1, 9000], "float32"),
        ("randn", [1, 9000], "float32"),
        ("value", 2),
        ("value", 0),
        ("value", 1),
        ("value", 1),
    ],
    "b1_n2_d9000_p0_fp16": [
        ("randn", [2, 9000], "float16"),
        ("tensor", "0 1", [2], "int64"),
        ("tensor", "0 1", [2], "int64"),
        ("randn", [1, 9000], "float16"),
        ("randn", [1, 9000], "float16"),
        ("value", 2),
        ("value", 0),
        ("value", 1),
        ("value", 1),
    ],
    "b1_n2_d9000_p0_bf16": [
        ("randn", [2, 9000], "bfloat16"),
        ("tensor", "0 1", [2], "int64"),
        ("tensor", "0 1", [2], "int64"),
        ("randn", [1, 9000], "bfloat16"),
        ("randn", [1, 9000], "bfloat16"),
        ("value", 2),
        ("value", 0),
        ("value", 1),
        ("value", 1),
    ],
}


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.split()]


def cases(kind: str = "accuracy") -> list[dict]:
    """The cases of one kind as plain data, the lengths as a list."""
    return [{**case, "lengths": _ints(case["lengths"])} for case in CASES[kind]]


def generate(name: str, device: str = "cpu", seed: int = 0) -> list:
    """Inputs of an accuracy case in the API's argument order: float values seeded normals,
    shapes and integer data (offsets, lengths) exactly the case's."""
    if name not in INPUTS:
        if any(case["name"] == name for case in CASES["performance"]):
            raise ValueError(f"{name!r} is a performance case: only accuracy inputs are rendered")
        raise ValueError(f"no case {name!r} of {OP}; accuracy cases: {', '.join(INPUTS)}")
    generator = torch.Generator().manual_seed(seed)
    made = []
    for recipe in INPUTS[name]:
        if recipe[0] == "randn":
            _, shape, dtype = recipe
            values = torch.randn(shape, generator=generator)
            made.append(values.to(getattr(torch, dtype)).to(device))
        elif recipe[0] == "tensor":
            _, values, shape, dtype = recipe
            exact = torch.tensor(_ints(values), dtype=getattr(torch, dtype))
            made.append(exact.reshape(shape).to(device))
        else:
            made.append(recipe[1])
    return made


def main() -> None:
    """`python generate_<op>.py [accuracy|performance]` prints the case list as JSON."""
    kind = sys.argv[1] if len(sys.argv) > 1 else "accuracy"
    json.dump(cases(kind), sys.stdout, indent=1)
    sys.stdout.write("\n")
