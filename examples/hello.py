# Count the Python files in the workspace and find where `async def` is used,
# handing back a small summary instead of every file's content.
files = await tools.ls(path=".", recursive=True, glob="*.py")
hits = await tools.grep(pattern=r"async def", path=".", glob="*.py", max_results=500)
per_file = {}
for hit in hits:
    per_file[hit["path"]] = per_file.get(hit["path"], 0) + 1
top = sorted(per_file.items(), key=lambda kv: kv[1], reverse=True)[:5]
print(f"scanned {len(files)} Python files")
return {"python_files": len(files), "async_defs": len(hits), "top_files": top}
