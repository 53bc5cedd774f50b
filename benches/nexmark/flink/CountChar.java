package com.github.nexmark.flink.udf;

import org.apache.flink.table.annotation.DataTypeHint;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.functions.ScalarFunction;

/** The Nexmark benchmark's q14 UDF, for running q14 on Flink beside weir: counts the bytes of s equal to the first byte of character (0 for a NULL s). */
public class CountChar extends ScalarFunction {
    public long eval(@DataTypeHint("STRING") StringData s, @DataTypeHint("STRING") StringData character) {
        if (s == null) {
            return 0;
        }
        byte wanted = character.toBytes()[0];
        long n = 0;
        for (byte b : s.toBytes()) {
            if (b == wanted) {
                n++;
            }
        }
        return n;
    }
}
