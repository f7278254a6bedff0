print("evaluate")
