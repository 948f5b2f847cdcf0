# Turns a text file into a C++ source defining smr::detail::embedded_default_config.
# Run at build time: -DINPUT=file -DOUTPUT=file.cpp
file(READ "${INPUT}" content HEX)
string(LENGTH "${content}" hex_len)
set(bytes "")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," bytes "${content}")
file(WRITE "${OUTPUT}"
  "// Generated from configs/default.yaml at build time. Do not edit.\n"
  "#include <string_view>\n"
  "namespace smr::detail {\n"
  "static const char kText[] = {${bytes} '\\0'};\n"
  "extern const std::string_view embedded_default_config{kText, sizeof(kText) - 1};\n"
  "}\n")
