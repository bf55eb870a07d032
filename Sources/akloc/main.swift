print("akloc")
