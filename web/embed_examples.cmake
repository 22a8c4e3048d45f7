# Writes examples.js: the project's example files as JavaScript strings, so
# "Try the example" works from file:// (where a page cannot fetch files).
# Usage: cmake -DOUT=examples.js -DROOT=<examples dir> -DFILES=a,b,... -P embed_examples.cmake
string(REPLACE "," ";" FILES "${FILES}")
set(js "// Generated from examples/ by web/embed_examples.cmake.\nwindow.TUNELOCK_EXAMPLE = [\n")
foreach(file IN LISTS FILES)
  file(READ ${ROOT}/${file} text)
  # A JSON-quoted JavaScript string, safe inside a <script>.
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  string(REPLACE "\r" "" text "${text}")
  string(REPLACE "\n" "\\n" text "${text}")
  string(REPLACE "</" "<\\/" text "${text}")
  get_filename_component(name ${file} NAME)
  string(APPEND js "  {\"name\": \"${name}\", \"text\": \"${text}\"},\n")
endforeach()
string(APPEND js "];\n")
file(WRITE ${OUT} "${js}")
